// The `convlab` Python module: the registry's algorithms planned and run on NumPy arrays
// and, for GPU algorithms, on CUDA arrays shared through __cuda_array_interface__.
#include "binding.hpp"
#include "convlab/config.hpp"
#include "convlab/threads.hpp"

PYBIND11_MODULE(convlab, m) {
  namespace py = pybind11;
  using namespace convlab::python;
  m.doc() =
      "convlab: FFT, im2col+GEMM, Winograd and vendor convolutions behind one interface.\n\n"
      "    import convlab, numpy as np\n"
      "    p = convlab.Problem('mb2ic3ih8oc4kh3ph1')\n"
      "    plan = convlab.algorithm('cpu.im2col').plan(p, 'fwd')\n"
      "    y = plan.run(x=np.ones(p.x_shape, np.float32), w=np.ones(p.w_shape, np.float32))\n";
  bind_errors(m);
  bind_info(m);
  bind_run(m);
  m.def("num_threads", &convlab::num_threads,
        "Threads the CPU algorithms use (set_num_threads, else CONVLAB_NUM_THREADS, else all).");
  m.def("set_num_threads", &convlab::set_num_threads, py::arg("n"),
        "Sets the CPU thread count for plans made and runs started from now on (n >= 1).");
  m.attr("__version__") = CONVLAB_VERSION;
  // Whether this build has the GPU backends: only then can Plan.run take CUDA arrays.
  m.attr("built_with_cuda") = py::bool_(CONVLAB_HAVE_CUDA != 0);
}
