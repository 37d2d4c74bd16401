#include "convlab/plugin.hpp"

#include <dlfcn.h>

#include <exception>

namespace convlab {
namespace {

void add_all_missing(Registry& registry, const std::vector<std::string>& provides,
                     const std::string& reason) {
  for (const std::string& glob : provides) registry.add_missing({glob, reason});
}

}  // namespace

std::string core_library_directory() {
  // Any function of this library will do: dladdr names the file it was loaded from, which
  // is where the plugin modules sit, in the build tree and in the install prefix alike.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&core_library_directory), &info) == 0 ||
      info.dli_fname == nullptr) {
    return ".";
  }
  const std::string file = info.dli_fname;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

void load_plugin(Registry& registry, const std::string& module,
                 const std::vector<std::string>& provides) {
  const std::string path =
      module.find('/') == std::string::npos ? core_library_directory() + "/" + module : module;
  // RTLD_NOW: a CUDA library that is missing fails here, with its name, rather than at the
  // first call into it. Never closed: the registered algorithms' code lives in the module.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    add_all_missing(registry, provides,
                    "cannot load " + path + ": " + (why != nullptr ? why : "unknown error"));
    return;
  }
  dlerror();
  void* entry = dlsym(handle, plugin_entry_point);
  if (entry == nullptr) {
    const char* why = dlerror();
    add_all_missing(
        registry, provides,
        path + " is not a convlab plugin: " + (why != nullptr ? why : "no entry point"));
    return;
  }
  try {
    // The one conversion from the data pointer dlsym returns to the entry's function type.
    reinterpret_cast<void (*)(Registry&)>(entry)(registry);
  } catch (const std::exception& e) {
    add_all_missing(registry, provides, "registering " + path + " failed: " + e.what());
  }
}

}  // namespace convlab
