# Installs the library, its public headers and a package config, so that
#   find_package(convlab CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE convlab::convlab)
# works from the install prefix. The config re-finds the dependencies the (static) library
# links, using the same find modules as this build.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CONVLAB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/convlab)

install(TARGETS convlab EXPORT convlabTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/include/convlab
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/convlab/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/convlab)
install(EXPORT convlabTargets NAMESPACE convlab:: DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/convlabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/convlabConfig.cmake INSTALL_DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
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
