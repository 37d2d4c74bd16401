# Tests of the GPU side that run without a GPU: the gpu_check dry run and its classifier.
# Included by tests/algorithms.cmake inside its CUDA block.
if(TARGET convbench)
  add_test(NAME gpu_check.dry_run
           COMMAND ${CONVLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_check_dry_run.py
                   ${PROJECT_SOURCE_DIR}/scripts/gpu_check ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/gpu_check_dry_run)
  set_tests_properties(gpu_check.dry_run PROPERTIES LABELS cpu SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
