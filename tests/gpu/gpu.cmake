# Tests of the GPU side that run without a GPU: the gpu_check dry run and its classifier.
# Included by tests/algorithms.cmake inside its CUDA block.
if(TARGET convbench)
  add_test(NAME gpu_check.dry_run
           COMMAND ${CONVLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_check_dry_run.py
                   ${PROJECT_SOURCE_DIR}/scripts/gpu_check ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/gpu_check_dry_run)
  set_tests_properties(gpu_check.dry_run PROPERTIES LABELS cpu SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

if(CONVLAB_HAVE_CUDNN)
  # cudnn.find's pick by math type (host), and the math types read back on a GPU.
  convlab_add_test(test_cudnn_find_pick cpu gpu/test_cudnn_find_pick.cpp)
  target_link_libraries(test_cudnn_find_pick PRIVATE CUDNN::cudnn)
endif()
convlab_add_test(test_gpu_math_modes gpu gpu/test_gpu_math_modes.cpp)
# It reads cuda/ internals back, so it links the CUDA module (see tests/algorithms.cmake).
target_link_libraries(test_gpu_math_modes PRIVATE convlab_cuda CUDA::cublas)
if(CONVLAB_HAVE_CUDNN)
  target_link_libraries(test_gpu_math_modes PRIVATE CUDNN::cudnn)
endif()

# The kernels' division-free index math against lib/strategy's plain-division functions, and
# cuda.fft's fused staging against the separate placements (fft_schedule: the CUDA module).
convlab_add_test(test_cuda_index cpu gpu/test_cuda_index.cpp)
target_link_libraries(test_cuda_index PRIVATE convlab_cuda)

# When a plan's own pass graph is captured, updated, replayed or bypassed (host logic).
convlab_add_test(test_graph_cache cpu gpu/test_graph_cache.cpp)

# One pass per GPU algorithm on the test's own stream, captured into a CUDA graph, replayed.
convlab_add_test(test_gpu_graph gpu gpu/test_gpu_graph.cpp)
target_link_libraries(test_gpu_graph PRIVATE CUDA::cudart)

# The GPU memory test's guard bands, checked on the host with injected out-of-bounds writes.
convlab_add_test(test_guard_bands cpu gpu/test_guard_bands.cpp)

# FindCUDNN does not pick an older decoy earlier on the search path (configure only). The
# generator is this build's own: a fresh machine may have Ninja and no make.
add_test(NAME find_cudnn.decoy
         COMMAND ${CMAKE_COMMAND} --fresh -S ${CMAKE_CURRENT_SOURCE_DIR}/gpu/find_cudnn
                 -B ${CMAKE_CURRENT_BINARY_DIR}/find_cudnn -G ${CMAKE_GENERATOR}
                 -DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
                 -DCONVLAB_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake)
set_tests_properties(find_cudnn.decoy PROPERTIES LABELS cpu)
