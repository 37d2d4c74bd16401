# Finds single-precision FFTW 3 and its pthreads companion library.
# Defines FFTW3f_FOUND and the imported target FFTW3::fftw3f (fftw3f + fftw3f_threads).
find_path(FFTW3f_INCLUDE_DIR fftw3.h HINTS ENV FFTW_ROOT PATH_SUFFIXES include)
find_library(FFTW3f_LIBRARY fftw3f HINTS ENV FFTW_ROOT PATH_SUFFIXES lib)
find_library(FFTW3f_THREADS_LIBRARY fftw3f_threads HINTS ENV FFTW_ROOT PATH_SUFFIXES lib)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3f
  REQUIRED_VARS FFTW3f_LIBRARY FFTW3f_THREADS_LIBRARY FFTW3f_INCLUDE_DIR)
if(FFTW3f_FOUND AND NOT TARGET FFTW3::fftw3f)
  find_package(Threads REQUIRED)
  add_library(FFTW3::fftw3f INTERFACE IMPORTED)
  set_target_properties(FFTW3::fftw3f PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${FFTW3f_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${FFTW3f_THREADS_LIBRARY};${FFTW3f_LIBRARY};Threads::Threads")
endif()
mark_as_advanced(FFTW3f_INCLUDE_DIR FFTW3f_LIBRARY FFTW3f_THREADS_LIBRARY)
