# Finds OpenBLAS with its CBLAS header (Debian keeps cblas.h in a per-variant folder).
# Defines OpenBLASCblas_FOUND and the imported target OpenBLAS::openblas.
find_path(OpenBLASCblas_INCLUDE_DIR cblas.h
  HINTS ENV OPENBLAS_ROOT
  PATH_SUFFIXES include include/openblas x86_64-linux-gnu/openblas-pthread
                aarch64-linux-gnu/openblas-pthread openblas-pthread openblas)
find_library(OpenBLASCblas_LIBRARY openblas HINTS ENV OPENBLAS_ROOT
  PATH_SUFFIXES lib x86_64-linux-gnu/openblas-pthread aarch64-linux-gnu/openblas-pthread)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLASCblas
  REQUIRED_VARS OpenBLASCblas_LIBRARY OpenBLASCblas_INCLUDE_DIR)
if(OpenBLASCblas_FOUND AND NOT TARGET OpenBLAS::openblas)
  add_library(OpenBLAS::openblas UNKNOWN IMPORTED)
  set_target_properties(OpenBLAS::openblas PROPERTIES
    IMPORTED_LOCATION "${OpenBLASCblas_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenBLASCblas_INCLUDE_DIR}")
endif()
mark_as_advanced(OpenBLASCblas_INCLUDE_DIR OpenBLASCblas_LIBRARY)
