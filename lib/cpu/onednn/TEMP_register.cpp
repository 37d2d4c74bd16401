// TEMPORARY scaffold so the tree links while this backend is written; the owner replaces it.
#include "lib/src/backends.hpp"
namespace convlab {
void register_cpu_onednn(Registry&) {}


}  // namespace convlab
