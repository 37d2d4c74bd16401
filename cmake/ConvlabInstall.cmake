# Installs the library, its public headers and a package config, so that
#   find_package(convlab CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE convlab::convlab)
# works from the install prefix. The config re-finds the dependencies the static targets
# link, using the same find modules as this build. The CUDA module is installed next to
# libconvlab_core, where the registry looks for it, and exported by no target: nothing
# links it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CONVLAB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/convlab)

if(TARGET convlab_cuda)
  install(TARGETS convlab_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS convlab_core convlab_strategy convlab_reference convlab_cpu convlab_eval convlab
  EXPORT convlabTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/convlab
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/convlab/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/convlab)
install(EXPORT convlabTargets NAMESPACE convlab:: DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})

# The Python module's folder under the prefix (python/CMakeLists.txt installs it there).
if(NOT CONVLAB_HAVE_PYTHON)
  set(CONVLAB_PYTHON_INSTALL_DIR "")
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/convlabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/convlabConfig.cmake INSTALL_DESTINATION ${CONVLAB_INSTALL_CMAKEDIR}
  PATH_VARS CONVLAB_PYTHON_INSTALL_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/convlabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/convlabConfig.cmake
  ${PROJECT_BINARY_DIR}/convlabConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindFFTW3f.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindCUDNN.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindOpenBLASCblas.cmake
  ${PROJECT_SOURCE_DIR}/cmake/ConvlabCUDAToolkitGuard.cmake
  DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
