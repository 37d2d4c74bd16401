#pragma once
/// \file
/// Backends built as plugin modules: shared libraries that nothing links, opened with dlopen
/// when the registry first needs their algorithms.

#include <string>
#include <vector>

#include "convlab/registry.hpp"

/// The entry point every plugin module exports (C linkage, so dlsym finds it by this name):
/// registers the module's algorithms on `registry`.
extern "C" void convlab_register_plugin(convlab::Registry& registry);

namespace convlab {

/// The name load_plugin() looks the entry point up by.
inline constexpr const char* plugin_entry_point = "convlab_register_plugin";

/// The folder that holds the loaded libconvlab_core (found with dladdr). Plugin modules sit
/// next to it, in the build tree and once installed alike.
std::string core_library_directory();

/// Opens `module` (a file name, looked up in core_library_directory(); or a path) and calls
/// its entry point on `registry`. Never throws for a module that cannot be used: when it, or
/// a library it needs (libcudart on a machine without CUDA), cannot be loaded, has no entry
/// point, or its entry point throws, each glob of `provides` is added as missing with the
/// dynamic loader's message (dlerror) or the exception's.
void load_plugin(Registry& registry, const std::string& module,
                 const std::vector<std::string>& provides);

}  // namespace convlab
