// The registry's deferred modules and the plugin loader, without a GPU: a lookup loads a
// deferred module only when its name or glob could name one of the module's algorithms, and
// a module that cannot be used leaves its algorithms missing with the loader's message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "convlab/config.hpp"
#include "convlab/error.hpp"
#include "convlab/plugin.hpp"
#include "convlab/registry.hpp"
#include "cpu/register_cpu.hpp"

namespace convlab {
namespace {

// A registry with the CPU backends and one deferred module that counts its loads and then
// fails to load `module`.
struct CountingRegistry {
  Registry registry;
  int loads = 0;
  explicit CountingRegistry(std::string module = "/nonexistent/libconvlab_fake.so") {
    register_cpu(registry);
    registry.add_deferred({{"fake.", "other."}, [this, module](Registry& part) {
                             ++loads;
                             load_plugin(part, module, {"fake.*", "other.*"});
                           }});
  }
};

std::string missing_reason(const Registry& registry, const std::string& name) {
  for (const MissingAlgorithm& m : registry.missing()) {
    if (m.name == name) return m.reason;
  }
  return "(not listed as missing)";
}

TEST(Plugins, LookupsThatCannotNameTheModulesAlgorithmsLeaveItUnloaded) {
  CountingRegistry r;
  EXPECT_EQ(r.registry.get("cpu.im2col").name(), "cpu.im2col");
  EXPECT_FALSE(r.registry.match("cpu.*").empty());
  EXPECT_FALSE(r.registry.match("cpu.im2col,cpu.i*").empty());
  EXPECT_EQ(r.loads, 0);
}

TEST(Plugins, GlobsThatCouldNameTheModulesAlgorithmsLoadItOnce) {
  for (const char* glob : {"*", "f*", "fake.x", "oth?r.*", "*.conv"}) {
    CountingRegistry r;
    try {
      r.registry.match(glob);
    } catch (const Error&) {
      // nothing matches once the module failed to load: that is the next test's subject
    }
    EXPECT_EQ(r.loads, 1) << glob;
    r.registry.all();
    EXPECT_EQ(r.loads, 1) << glob << ": loaded again";
  }
}

TEST(Plugins, AModuleThatCannotBeOpenedIsMissingWithTheLoadersMessage) {
  CountingRegistry r;
  try {
    r.registry.get("fake.conv");
    FAIL() << "fake.conv was found";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("cannot load /nonexistent/libconvlab_fake.so"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
  EXPECT_NE(missing_reason(r.registry, "other.*").find("No such file"), std::string::npos);
  EXPECT_EQ(r.loads, 1);
}

TEST(Plugins, AFileThatIsNoSharedLibraryIsMissingWithTheLoadersMessage) {
  const std::string path =
      ::testing::TempDir() + "convlab_not_a_module_" + std::to_string(::getpid()) + ".so";
  // Longer than an ELF header, so the loader reads and rejects one rather than the size.
  std::ofstream(path) << std::string(256, 'x');
  CountingRegistry r(path);
  const std::string reason = missing_reason(r.registry, "fake.*");
  std::remove(path.c_str());
  EXPECT_NE(reason.find("cannot load " + path), std::string::npos) << reason;
  EXPECT_NE(reason.find("ELF"), std::string::npos) << reason;  // glibc: "invalid ELF header"
}

TEST(Plugins, ALibraryWithoutTheEntryPointIsMissingWithTheLoadersMessage) {
  // The core library itself: a real shared library, but no plugin.
  CountingRegistry r(core_library_directory() + "/libconvlab_core.so");
  const std::string reason = missing_reason(r.registry, "fake.*");
  EXPECT_NE(reason.find("is not a convlab plugin"), std::string::npos) << reason;
  EXPECT_NE(reason.find(plugin_entry_point), std::string::npos) << reason;
}

TEST(Plugins, TheCoreLibraryIsFoundWhereItWasLoadedFrom) {
  const std::string dir = core_library_directory();
  EXPECT_EQ(::access((dir + "/libconvlab_core.so").c_str(), R_OK), 0) << dir;
#if CONVLAB_HAVE_CUDA
  // The module the registry loads sits next to it.
  EXPECT_EQ(::access((dir + "/libconvlab_cuda.so").c_str(), R_OK), 0) << dir;
#endif
}

}  // namespace
}  // namespace convlab
