# One line per algorithm test binary (see tests/CMakeLists.txt: convlab_add_test).
convlab_add_test(test_im2col_index cpu cpu/test_im2col_index.cpp)
convlab_add_test(test_im2col_tap_classes cpu cpu/test_im2col_tap_classes.cpp)
convlab_add_test(test_im2col_padded_grid cpu cpu/test_im2col_padded_grid.cpp)
convlab_add_test(test_im2col_masked_columns cpu cpu/test_im2col_masked_columns.cpp)
convlab_add_test(test_fast_divmod cpu cpu/test_fast_divmod.cpp)  # index math without division
convlab_add_test(test_cpu_im2col cpu cpu/test_cpu_im2col.cpp)
convlab_add_test(test_fft_geometry cpu cpu/test_fft_geometry.cpp)
convlab_add_test(test_tiled_fft_geometry cpu cpu/test_tiled_fft_geometry.cpp)
convlab_add_test(test_winograd_transform cpu cpu/test_winograd_transform.cpp)
convlab_add_test(test_winograd_toom_cook cpu cpu/test_winograd_toom_cook.cpp)
convlab_add_test(test_winograd_geometry cpu cpu/test_winograd_geometry.cpp)
convlab_add_test(test_gemm_kernels cpu cpu/test_gemm_kernels.cpp)
convlab_add_test(test_cpu_winograd cpu cpu/test_cpu_winograd.cpp)
if(CONVLAB_HAVE_FFTW)  # cpu.fft is only built with FFTW
  convlab_add_test(test_cpu_fft cpu cpu/test_cpu_fft.cpp)
  convlab_add_test(test_cpu_fft_tiled cpu cpu/test_cpu_fft_tiled.cpp)
endif()
convlab_add_test(test_cards cpu cpu/test_cards.cpp)
convlab_add_test(test_memory_model cpu cpu/test_memory_model.cpp)
convlab_add_test(test_select cpu cpu/test_select.cpp cpu/test_predicted_range.cpp)
if(CONVLAB_HAVE_CUDA)  # host logic of cuda/ (runs without a GPU) and the GPU suites
  convlab_add_test(test_cuda_host cpu gpu/test_cuda_host.cpp)
  convlab_add_test(test_cuda_fft_host cpu gpu/test_cuda_fft_host.cpp)
  convlab_add_test(test_cuda_fft_tiled_host cpu gpu/test_cuda_fft_tiled_host.cpp)
  convlab_add_test(test_cuda_winograd_host cpu gpu/test_cuda_winograd_host.cpp)
  convlab_add_test(test_cuda_emulated cpu gpu/test_cuda_emulated.cpp)
  convlab_add_test(test_gpu_algorithms gpu gpu/test_gpu_algorithms.cpp)
  convlab_add_test(test_gpu_workspace gpu gpu/test_gpu_workspace.cpp)
  convlab_add_test(test_gpu_ceilings gpu gpu/test_gpu_ceilings.cpp)
  # They call cuda/ internals, so they link the CUDA module (the registry then finds it
  # loaded already).
  foreach(t test_cuda_host test_cuda_fft_host test_cuda_fft_tiled_host test_cuda_winograd_host
            test_cuda_emulated test_gpu_algorithms test_gpu_workspace test_gpu_ceilings)
    target_link_libraries(${t} PRIVATE convlab_cuda)
  endforeach()
  include(${CMAKE_CURRENT_SOURCE_DIR}/gpu/gpu.cmake)  # gpu_check dry run, guard bands, FindCUDNN
endif()
convlab_add_test(test_nonfinite cpu cpu/test_nonfinite.cpp)
convlab_add_test(test_cpu_onednn cpu cpu/test_cpu_onednn.cpp)
if(CONVLAB_HAVE_ONEDNN)  # the version CMake found, to compare with the one loaded at run time
  target_compile_definitions(test_cpu_onednn PRIVATE CONVLAB_FOUND_ONEDNN_VERSION="${dnnl_VERSION}")
endif()
convlab_add_test(test_memory_honesty cpu cpu/test_memory_honesty.cpp)
convlab_add_test(test_determinism cpu cpu/test_determinism.cpp)
include(${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs/bad_inputs.cmake)  # bad input -> named error
include(${PROJECT_SOURCE_DIR}/fuzz/replay.cmake)  # every input the fuzzer ever found, replayed
add_subdirectory(cli)  # convbench: runner test and CLI tests (tests/cli/CMakeLists.txt)
# Bitwise reproducibility across two processes, for every algorithm that says deterministic.
add_executable(output_hashes reproducibility/output_hashes.cpp)
target_link_libraries(output_hashes PRIVATE convlab)
foreach(device cpu gpu)
  add_test(NAME reproducibility.${device}
           COMMAND ${CONVLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/reproducibility/run_twice.py
                   $<TARGET_FILE:output_hashes> ${device})
  set_tests_properties(reproducibility.${device} PROPERTIES LABELS ${device} SKIP_RETURN_CODE 77)
endforeach()
