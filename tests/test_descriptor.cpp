// benchdnn descriptors: parsing as benchdnn reads them, canonical formatting, shape files.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>

#include "convlab/descriptor.hpp"
#include "convlab/error.hpp"
#include "support/conv_tester.hpp"

namespace convlab {
namespace {

const std::string kData = CONVLAB_TEST_DATA;

std::string error_of(const std::string& text) {
  try {
    parse_descriptor(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Descriptor, ParsesTheCanonicalForm) {
  const Layer l = parse_descriptor(
      "g1mb32ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0n\"resnet:res2*3\"");
  EXPECT_EQ(l.problem.n, 32);
  EXPECT_EQ(l.problem.c, 64);
  EXPECT_EQ(l.problem.h, 56);
  EXPECT_EQ(l.problem.k, 64);
  EXPECT_EQ(l.problem.r, 3);
  EXPECT_EQ(l.problem.pad_h, 1);
  EXPECT_EQ(l.problem.dilation_h, 1);  // benchdnn dh0 = dense = our 1
  EXPECT_EQ(l.name, "resnet:res2");
  EXPECT_EQ(l.repeat, 3);
}

TEST(Descriptor, PromotesMissingValuesAsBenchdnn) {
  const Layer l = parse_descriptor("ic3ih227oc96oh55kh11sh4ph0");
  const ConvProblem& p = l.problem;
  EXPECT_EQ(p.n, 2);  // benchdnn's default minibatch
  EXPECT_EQ(p.groups, 1);
  EXPECT_EQ(p.w, 227);
  EXPECT_EQ(p.s, 11);
  EXPECT_EQ(p.stride_w, 4);
  EXPECT_EQ(p.pad_w, 0);
  EXPECT_EQ(p.out_w(), 55);
  // Only w given: copied to h.
  const ConvProblem q = parse_descriptor("mb1ic2iw9oc3kw3").problem;
  EXPECT_EQ(q.h, 9);
  EXPECT_EQ(q.r, 3);
}

TEST(Descriptor, DilationZeroIsDense) {
  EXPECT_EQ(parse_descriptor("ic2ih20oc2kh3dh0").problem.dilation_h, 1);
  EXPECT_EQ(parse_descriptor("ic2ih20oc2kh3dh1dw0").problem.dilation_w, 2);  // dw0: default
  const ConvProblem p = parse_descriptor("ic2ih20iw20oc2kh3kw3dh1dw2").problem;
  EXPECT_EQ(p.dilation_h, 2);
  EXPECT_EQ(p.dilation_w, 3);
  EXPECT_EQ(p.out_h(), 20 - 4);
}

TEST(Descriptor, DeducesPaddingFromTheOutputSize) {
  const ConvProblem p = parse_descriptor("mb1ic4ih56oc4oh56kh3").problem;
  EXPECT_EQ(p.pad_h, 1);
  EXPECT_EQ(p.pad_w, 1);
  const ConvProblem q = parse_descriptor("mb1ic4ih56oc4oh54kh3").problem;
  EXPECT_EQ(q.pad_h, 0);
}

TEST(Descriptor, UnderscoresAreIgnored) {
  EXPECT_EQ(parse_descriptor("mb1_ic3oc8_ih5kh3_ph1").problem,
            parse_descriptor("mb1ic3oc8ih5kh3ph1").problem);
}

TEST(Descriptor, GivenOutputMustAgree) {
  const std::string m = error_of("mb1ic3ih10oc8oh9kh3ph1");
  EXPECT_NE(m.find("given oh 9 does not match the computed 10"), std::string::npos) << m;
}

TEST(Descriptor, PositionedErrors) {
  struct Case {
    const char* text;
    const char* fragment;
  };
  const Case cases[] = {
      {"", "empty string"},
      {"mb2ic3ih5oc8kh3x", "at character 16: unknown key 'x'"},
      {"mb2icXih5", "at character 6: expected a number after 'ic'"},
      {"mb2ic3ic4ih5oc8kh3", "at character 7: key 'ic' given twice"},
      {"mb2ih5oc8kh3", "missing 'ic' (input channels)"},
      {"mb2ic3ih5kh3", "missing 'oc' (output channels)"},
      {"mb2ic3oc8kh3", "missing 'ih' (input height)"},
      {"mb2ic3ih5oc8", "missing 'kh' (kernel height)"},
      {"mb2ic3ih5oc8kh3n\"open", "unterminated name"},
      {"mb2ic3ih5oc8kh3n\"a\"junk", "expected the end of the descriptor after the name, got 'junk'"},
      {"mb2ic3ih5oc8kh3nx", "expected '\"' to open the name"},
      {"mb99999999999999999999ic3ih5oc8kh3", "at character 3: the number for 'mb' overflows int64"},
      {"mb2ic3id5ih5oc8kh3", "3-D convolution"},
      {"mb2ic3ih5oc8kh3rh1", "right padding"},
      {"mb2ic3ih5oc8kh3 ", "at character 16: expected a key"},
      {"mb2ic3ih5oc8kh3n\"a*0\"", "repeat count '*N' must be >= 1"},
  };
  for (const Case& c : cases) {
    const std::string m = error_of(c.text);
    EXPECT_NE(m.find(c.fragment), std::string::npos) << "'" << c.text << "': " << m;
  }
}

TEST(Descriptor, InvalidProblemsAreInvalidProblem) {
  try {
    parse_descriptor("mb1ic3ih5oc8kh7");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_problem);
    EXPECT_NE(std::string(e.what()).find("kernel 7 (dilated 7) is larger than padded input 5"),
              std::string::npos);
  }
  try {
    parse_descriptor("mb-1ic3ih5oc8kh3");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_problem);
    EXPECT_NE(std::string(e.what()).find("got -1"), std::string::npos);
  }
}

TEST(Descriptor, RoundTripsRandomProblems) {
  const uint64_t seed = testing::run_seed();
  for (const ConvProblem& p : testing::random_problems(seed, 500)) {
    const std::string text = format_descriptor(p, "layer", 2);
    const Layer back = parse_descriptor(text);
    EXPECT_EQ(back.problem, p) << text << " (seed " << seed << ")";
    EXPECT_EQ(back.name, "layer");
    EXPECT_EQ(back.repeat, 2);
    EXPECT_EQ(format_descriptor(back), text);
  }
}

TEST(Descriptor, FormatsTheCanonicalForm) {
  ConvProblem p;
  p.n = 32, p.c = 64, p.h = 56, p.w = 56, p.k = 64, p.r = 3, p.s = 3, p.pad_h = 1, p.pad_w = 1;
  EXPECT_EQ(format_descriptor(p, "x"),
            "g1mb32ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0n\"x\"");
  EXPECT_EQ(p.descriptor(), "g1mb32ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0");
}

TEST(ShapeFile, EveryBenchdnnFileParsesWithItsLayerCount) {
  const std::pair<const char*, size_t> files[] = {
      {"shapes_alexnet", 5}, {"shapes_resnet_50", 20}, {"shapes_googlenet_v1", 51}};
  for (auto [name, count] : files) {
    const auto layers = read_shape_file(kData + "/benchdnn/" + name);
    EXPECT_EQ(layers.size(), count) << name;
    for (const Layer& l : layers) {
      EXPECT_FALSE(l.name.empty()) << name;
      EXPECT_NO_THROW(l.problem.validate());
    }
  }
  const auto resnet = read_shape_file(kData + "/benchdnn/shapes_resnet_50");
  EXPECT_EQ(resnet[1].name, "resnet_50:res2a_branch1");
  EXPECT_EQ(resnet[1].repeat, 4);
  EXPECT_EQ(resnet[0].problem.n, 50);
}

TEST(ShapeFile, CommentsBlankLinesAndErrorsWithLineNumbers) {
  const auto layers = parse_shape_text(
      "# a comment\n\n  mb1ic3ih5oc8kh3 # trailing\nmb1ic3ih5oc8kh1n\"a#b\"\n", "inline");
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[1].name, "a#b");
  try {
    parse_shape_text("mb1ic3ih5oc8kh3\nmb1ic3ih5oc8kh3q\n", "f.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.txt:2: bad descriptor"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_shape_text("--dir=FWD_B\n", "opts"), Error);
}

TEST(ShapeFile, BadFilesGiveClearErrors) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir + name, std::ios::binary) << content;
    return dir + name;
  };
  struct Case {
    std::string path;
    ErrorCode code;
    const char* fragment;
  };
  const Case cases[] = {
      {dir + "does_not_exist", ErrorCode::io, "No such file"},
      {dir, ErrorCode::io, "is a directory"},
      {write("empty.txt", ""), ErrorCode::invalid_argument, "(it is empty)"},
      {write("comments.txt", "# only\n"), ErrorCode::invalid_argument, "(only comments)"},
      {write("binary.bin", std::string("mb1\0\x01\x02", 6)), ErrorCode::invalid_argument,
       "is not text"},
  };
  for (const Case& c : cases) {
    try {
      read_shape_file(c.path);
      ADD_FAILURE() << c.path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), c.code) << c.path;
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.path), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace convlab
