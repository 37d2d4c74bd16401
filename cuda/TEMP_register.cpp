// TEMPORARY scaffold so the tree links while this backend is written; the owner replaces it.
#include "lib/src/backends.hpp"
namespace convlab {
void register_cuda(Registry&) {}


}  // namespace convlab
namespace convlab { void register_cudnn(Registry&) {} }
