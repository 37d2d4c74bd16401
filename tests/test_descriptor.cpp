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

// What --vary builds its shapes with: the descriptor's own tokenizer finds each entry.
TEST(Descriptor, EditSetsKeysInPlaceAddsMissingOnesAndRenames) {
  EXPECT_EQ(edit_descriptor("mb2_ic3ih9oc4kh3n\"a*2\"", {{"kh", 5}, {"ih", 16}}, "a kh=5"),
            "mb2_ic3ih16oc4kh5n\"a kh=5\"");
  EXPECT_EQ(edit_descriptor("mb2ic3ih9oc4kh3", {{"sh", 2}, {"g", 1}}, ""), "mb2ic3ih9oc4kh3g1sh2");
  // A key set twice takes its last value; the result parses to what was asked.
  const std::string text = edit_descriptor("ic3ih9oc4kh3", {{"oc", 8}, {"oc", 16}}, "x");
  EXPECT_EQ(text, "ic3ih9oc16kh3n\"x\"");
  EXPECT_EQ(parse_descriptor(text).problem.k, 16);
  EXPECT_EQ(parse_descriptor(text).name, "x");
}

TEST(Descriptor, EditRefusesUnknownKeysAndMalformedText) {
  auto edit_error = [](const std::string& text, const std::string& key) -> std::string {
    try {
      edit_descriptor(text, {{key, 1}}, "");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(edit_error("ic3ih9oc4kh3", "zz").find("unknown descriptor key 'zz'"),
            std::string::npos);
  EXPECT_NE(edit_error("ic3ihX", "kh").find("bad descriptor 'ic3ihX'"), std::string::npos);
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

// benchdnn (conv_aux.cpp, conv.hpp) with oh given and ph not:
//   ph = ((oh - 1) * sh - ih + ((kh - 1) * (dh + 1) + 1)) / 2,
//   ph_r = (oh - 1) * sh - ih + ((kh - 1) * (dh + 1) + 1) - ph.
// Each expectation below is that formula worked by hand.
TEST(Descriptor, DeducesAsymmetricPaddingAsBenchdnnDoes) {
  struct Case {
    const char* text;
    int64_t pad_h, end_h, pad_w, end_w;
  };
  const Case cases[] = {
      // total 8 - 8 + 3 = 3: ph 1, ph_r 2 (convlab used to refuse it)
      {"mb2ic4ih8oc4oh9kh3", 1, 2, 1, 2},
      // total 111*2 - 224 + 7 = 5: ph 2, ph_r 3 (convlab used to pad 3 on both sides, a
      // convolution shifted by one row and column)
      {"mb1ic2ih224oc2oh112kh7sh2", 2, 3, 2, 3},
      // total 2: symmetric
      {"mb1ic4ih56oc4oh56kh3", 1, 1, 1, 1},
      // dilation 2 (dh1): kernel extent 5, total 9 - 9 + 5 = 5: ph 2, ph_r 3; w: 3*2 - 7 + 2
      // = 1: pw 0, pw_r 1
      {"mb1ic2ih9iw7oc2oh10ow4kh3kw2sw2dh1", 2, 3, 0, 1},
      // ph given with oh: ph_r = 8 - 10 + 3 - 1 = 0
      {"mb1ic3ih10oc8oh9kh3ph1", 1, 0, 1, 0},
      // total 4 - 8 + 3 = -1: ph = -1/2 = 0 in C, ph_r -1; end paddings -1 and 0 give the same
      // oh 3 with stride 2, and convlab keeps 0
      {"mb1ic1ih8oc1oh3kh3sh2", 0, 0, 0, 0},
      // ph given, no oh: the end padding equals it
      {"mb1ic1ih224oc1kh7sh2ph3", 3, 3, 3, 3},
  };
  for (const Case& c : cases) {
    const ConvProblem p = parse_descriptor(c.text).problem;
    EXPECT_EQ(p.pad_h, c.pad_h) << c.text;
    EXPECT_EQ(p.end_pad_h(), c.end_h) << c.text;
    EXPECT_EQ(p.pad_w, c.pad_w) << c.text;
    EXPECT_EQ(p.end_pad_w(), c.end_w) << c.text;
    EXPECT_EQ(p.asymmetric_padding(), c.pad_h != c.end_h || c.pad_w != c.end_w) << c.text;
  }
  const ConvProblem stem = parse_descriptor("mb1ic2ih224oc2oh112kh7sh2").problem;
  EXPECT_EQ(stem.out_h(), 112);
  EXPECT_EQ(stem.descriptor(), "g1mb1ic2ih224iw224oc2oh112ow112kh7kw7sh2sw2ph2pw2dh0dw0");
}

TEST(Descriptor, OutputSizeNoPaddingGivesIsRefusedNamingIt) {
  struct Case {
    const char* text;
    const char* fragment;
  };
  const Case cases[] = {
      // total 1 - 8 + 3 = -4: ph -2, a crop
      {"mb1ic1ih8oc1oh2kh3", "no padding gives the given oh 2"},
      // ph 1 given: ph_r = 2 - 8 + 3 - 1 = -4
      {"mb1ic1ih8oc1oh3kh3ph1", "no padding gives the given oh 3"},
      {"mb1ic1ih8iw8oc1oh8ow3kh3kw3", "no padding gives the given ow 3"},
  };
  for (const Case& c : cases) {
    try {
      parse_descriptor(c.text);
      ADD_FAILURE() << c.text << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_problem) << c.text;
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << e.what();
    }
  }
}

TEST(Descriptor, RoundTripsEveryEdgeCaseWithItsEndPadding) {
  for (const ConvProblem& p : testing::edge_cases()) {
    const std::string text = p.descriptor();
    const ConvProblem back = parse_descriptor(text).problem;
    EXPECT_EQ(back, p) << text;
    EXPECT_EQ(back.end_pad_h(), p.end_pad_h()) << text;
    EXPECT_EQ(back.end_pad_w(), p.end_pad_w()) << text;
  }
}

TEST(Descriptor, EndPaddingEntersTheOutputSizeAndTheCounts) {
  ConvProblem p = parse_descriptor("mb1ic2ih5oc3kh3").problem;  // 3x3 output
  const int64_t symmetric_flops = p.flops(Pass::forward);
  p.pad_h_end = 2;  // rows 5 and 6 are padding: output 5x3
  EXPECT_EQ(p.out_h(), 5);
  EXPECT_EQ(p.out_w(), 3);
  EXPECT_EQ(p.y_elems(), 1 * 3 * 5 * 3);
  EXPECT_EQ(p.flops(Pass::forward), symmetric_flops * 5 / 3);
  EXPECT_TRUE(p.asymmetric_padding());
  ConvProblem q = p;
  q.pad_h_end = std::nullopt;
  EXPECT_NE(p, q);
  q.pad_h_end = 2;
  EXPECT_EQ(p, q);
  ConvProblem set_equal = parse_descriptor("mb1ic2ih5oc3kh3").problem;
  set_equal.pad_h_end = 0;  // set to the start padding: the same problem as unset
  EXPECT_EQ(set_equal, parse_descriptor("mb1ic2ih5oc3kh3").problem);
  p.pad_w_end = -1;
  try {
    p.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("end padding width (right) must be >= 0, got -1"),
              std::string::npos)
        << e.what();
  }
}

TEST(Descriptor, LayerNamesWithControlCharactersAreRefused) {
  const std::string m = error_of("mb1ic3ih5oc8kh3n\"conv\n1\"");
  EXPECT_NE(m.find("the layer name holds a control character (\\x0A)"), std::string::npos) << m;
  EXPECT_NE(error_of("mb1ic3ih5oc8kh3n\"a\tb\"").find("control character (\\x09)"),
            std::string::npos);
  EXPECT_EQ(parse_descriptor("mb1ic3ih5oc8kh3n\"a b:c*2\"").name, "a b:c");
}

TEST(Descriptor, LongDescriptorsAreQuotedShort) {
  const std::string m = error_of("mb1ic3ih5oc8kh3x" + std::string(5000, 'y'));
  EXPECT_LT(m.size(), 600u) << m.size();
  EXPECT_NE(m.find("(5016 characters)"), std::string::npos) << m.substr(0, 300);
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

TEST(ShapeFile, ByteOrderMarkAndCrlfLineEndsAreAccepted) {
  const auto layers = parse_shape_text(
      "\xEF\xBB\xBF# saved on Windows\r\nmb1ic3ih5oc8kh3n\"a\"\r\n\r\nmb1ic3ih5oc8kh1\r\n", "win");
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].name, "a");
  EXPECT_EQ(layers[1].problem.r, 1);
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "bom_crlf.txt", std::ios::binary) << "\xEF\xBB\xBFmb1ic3ih5oc8kh3\r\n";
  EXPECT_EQ(read_shape_file(dir + "bom_crlf.txt").size(), 1u);
  std::ofstream(dir + "bom_only.txt", std::ios::binary) << "\xEF\xBB\xBF";
  try {
    read_shape_file(dir + "bom_only.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(it is empty)"), std::string::npos) << e.what();
  }
}

TEST(ShapeFile, ReadingIsBounded) {
  const std::string dir = ::testing::TempDir();
  auto error_reading = [](const std::string& path) {
    try {
      read_shape_file(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // A line longer than any descriptor, quoted short.
  std::ofstream(dir + "long_line.txt", std::ios::binary) << "mb1ic3ih5oc8kh3\n"
                                                         << std::string(10000, '#') << "\n";
  const std::string long_line = error_reading(dir + "long_line.txt");
  EXPECT_NE(long_line.find("long_line.txt:2: line of 10000 characters, more than the limit"),
            std::string::npos)
      << long_line.substr(0, 300);
  EXPECT_LT(long_line.size(), 400u);
  // A file over the size limit is refused after reading at most the limit.
  {
    std::ofstream big(dir + "big.txt", std::ios::binary);
    const std::string line = "mb1ic3ih5oc8kh3 # padding the file out to a large size\n";
    for (int64_t written = 0; written <= (int64_t{17} << 20); written += line.size()) big << line;
  }
  EXPECT_NE(error_reading(dir + "big.txt").find("is larger than the limit of 16777216 bytes"),
            std::string::npos);
  // A device with no end: stops at the limit instead of reading until memory runs out.
  EXPECT_NE(error_reading("/dev/zero").find("/dev/zero"), std::string::npos);
  // More descriptors than any network has.
  std::string many;
  for (int i = 0; i < 100001; ++i) many += "ic1ih1oc1kh1\n";
  try {
    parse_shape_text(many, "many.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("many.txt:100001: more than 100000 descriptors"),
              std::string::npos)
        << e.what();
  }
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
