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

# cuda.fft's fused crop callback linked by nvJitLink as cuFFT links it (no GPU needed): a PTX
# caller made from crop_callback_caller.cu, embedded like the callback itself.
find_library(CONVLAB_NVJITLINK_LIBRARY nvJitLink HINTS ${CUDAToolkit_LIBRARY_DIR})
if(CONVLAB_NVJITLINK_LIBRARY)
  get_target_property(_callback_arch convlab_cuda CONVLAB_CROP_CALLBACK_ARCH)
  include(ConvlabNvccEmbed)
  convlab_add_test(test_cuda_fft_callback cpu gpu/test_cuda_fft_callback.cpp)
  convlab_embed_nvcc(TARGET test_cuda_fft_callback
                     SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/gpu/crop_callback_caller.cu KIND ptx
                     ARCH ${_callback_arch} SYMBOL kCropCallbackCallerPtx
                     NAMESPACE convlab::testing)
  # sm_90 (the lent GPUs), or the callback's own architecture when that is newer.
  set(_link_arch 90)
  if(_callback_arch GREATER 90)
    set(_link_arch ${_callback_arch})
  endif()
  target_compile_definitions(test_cuda_fft_callback PRIVATE CONVLAB_LINK_ARCH=${_link_arch})
  target_include_directories(test_cuda_fft_callback PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(test_cuda_fft_callback PRIVATE convlab_cuda ${CONVLAB_NVJITLINK_LIBRARY})
else()
  message(STATUS "nvJitLink not found: test_cuda_fft_callback (the crop callback links) not built")
endif()
