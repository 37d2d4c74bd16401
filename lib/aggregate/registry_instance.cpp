// The process-wide registry: every backend this build has, the CPU ones registered directly
// and the CUDA module deferred until a lookup could name one of its algorithms. This is the
// one file that knows which backends were built; the backends depend on the core, and the
// core on none of them.
#include "convlab/config.hpp"
#include "convlab/plugin.hpp"
#include "convlab/registry.hpp"
#include "cpu/register_cpu.hpp"
#include "cpu_reference/register_reference.hpp"

namespace convlab {
namespace {

void register_built(Registry& r) {
  register_reference(r);
  register_cpu(r);
#if CONVLAB_HAVE_CUDA
  std::vector<std::string> prefixes = {"cuda."}, provides = {"cuda.*"};
#if CONVLAB_HAVE_CUDNN
  prefixes.push_back("cudnn.");
  provides.push_back("cudnn.*");
#endif
  r.add_deferred(
      {prefixes, [provides](Registry& part) { load_plugin(part, CONVLAB_CUDA_MODULE, provides); }});
#else
  r.add_missing({"cuda.*", "not built: no CUDA compiler/toolkit at configure time"});
#endif
#if !CONVLAB_HAVE_CUDNN
  r.add_missing({"cudnn.*", "not built: cuDNN 9 (with CUDA) was not found at configure time"});
#endif
}

}  // namespace

const Registry& registry() {
  // Never destroyed: algorithms from a plugin module must not be destroyed after the
  // module's own static objects are (exit runs those first, as they were made later).
  static const Registry& instance = *[] {
    auto* r = new Registry;
    register_built(*r);
    return r;
  }();
  return instance;
}

}  // namespace convlab
