// The range of a calibrated prediction: the roofline divided by the largest and smallest
// per-case ratio roofline / measured of the calibrating sweep.
#include <gtest/gtest.h>

#include <vector>

#include "convlab/cards.hpp"
#include "convlab/descriptor.hpp"

namespace convlab {
namespace {

Card card(const char* id, double flops, double bandwidth) {
  return Card{id, id, 1 << 30, 1 << 30, bandwidth, flops, "test", 2020, "test"};
}

AlgorithmInfo direct_algorithm() {
  AlgorithmInfo info;
  info.name = "test.direct";
  info.family = Family::direct;
  return info;
}

MeasuredTime measured(const char* descriptor, double time_ms) {
  MeasuredTime t;
  t.problem = parse_descriptor(descriptor).problem;
  t.algorithm = "test.direct";
  t.family = Family::direct;
  t.device = "cpu";
  t.time_ms = t.time_ms_min = t.time_ms_max = time_ms;
  return t;
}

// By hand: mb1ic1ih3oc1kh3 is one 3x3 dot product, 18 flops, (9 + 9 + 1) x 4 = 76 bytes. On
// a card of 18 kflop/s and 760 kB/s it is compute bound at 1 ms (memory 0.1 ms). Measured
// at 2 ms and 4 ms (ratios 0.5 and 0.25), the efficiency is 2 / 6 = 1/3. On a card twice as
// fast the roofline is 0.5 ms: the point 1.5 ms, the range 0.5 / 0.5 = 1 ms to 0.5 / 0.25
// = 2 ms.
TEST(PredictedRange, HandComputedExample) {
  const Card measured_on = card("slow", 1.8e4, 7.6e5);
  const Card faster = card("fast", 3.6e4, 7.6e5);
  const char* layer = "mb1ic1ih3oc1kh3";
  ASSERT_DOUBLE_EQ(
      roofline(work_count(AlgorithmFamily::direct, parse_descriptor(layer).problem, Pass::forward),
               measured_on)
          .time_ms,
      1.0);
  const Calibration cal = calibrate({measured(layer, 2.0), measured(layer, 4.0)}, measured_on);
  const Prediction p =
      predict(direct_algorithm(), parse_descriptor(layer).problem, Pass::forward, faster, &cal);
  ASSERT_TRUE(p.calibrated);
  EXPECT_NEAR(p.efficiency, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(p.time_ms, 1.5, 1e-12);
  ASSERT_TRUE(p.range.has_value());
  EXPECT_NEAR(p.range->low_ms, 1.0, 1e-12);
  EXPECT_NEAR(p.range->high_ms, 2.0, 1e-12);
}

// On the card it was measured on, every case of the sweep falls inside its own predicted
// range, and every range holds its point, however uneven the ratios.
TEST(PredictedRange, HoldsThePointAndEveryCalibratingCase) {
  const Card measured_on = card("here", 2e11, 3e10);
  const std::vector<MeasuredTime> times = {
      measured("mb4ic16ih32oc32kh3ph1", 0.9), measured("mb4ic64ih14oc64kh1", 0.05),
      measured("mb2ic32ih28oc48kh5ph2sh2", 3.0), measured("mb1ic3ih9oc4kh3", 0.02)};
  const Calibration cal = calibrate(times, measured_on);
  const Calibration::Entry& e = *cal.find("test.direct");
  ASSERT_LT(e.min_ratio, e.max_ratio);  // uneven, so the range is not a point
  for (const MeasuredTime& t : times) {
    const Prediction p = predict(direct_algorithm(), t.problem, t.pass, measured_on, &cal);
    ASSERT_TRUE(p.range.has_value()) << t.problem.descriptor();
    EXPECT_LE(p.range->low_ms, p.time_ms) << t.problem.descriptor();
    EXPECT_GE(p.range->high_ms, p.time_ms) << t.problem.descriptor();
    EXPECT_LT(p.range->low_ms, p.range->high_ms) << t.problem.descriptor();
    EXPECT_LE(p.range->low_ms, t.time_ms * (1 + 1e-12)) << t.problem.descriptor();
    EXPECT_GE(p.range->high_ms, t.time_ms * (1 - 1e-12)) << t.problem.descriptor();
  }
}

// Equal ratios give a range of one point that still holds it, rounding aside.
TEST(PredictedRange, OneRatioIsARangeOfThePoint) {
  const Card measured_on = card("here", 2e11, 3e10);
  const ConvProblem p = parse_descriptor("mb4ic16ih32oc32kh3ph1").problem;
  const double roof =
      roofline(work_count(AlgorithmFamily::direct, p, Pass::forward), measured_on).time_ms;
  const Calibration cal = calibrate({measured("mb4ic16ih32oc32kh3ph1", roof / 0.3)}, measured_on);
  const Prediction q = predict(direct_algorithm(), p, Pass::forward, measured_on, &cal);
  ASSERT_TRUE(q.range.has_value());
  EXPECT_LE(q.range->low_ms, q.time_ms);
  EXPECT_GE(q.range->high_ms, q.time_ms);
  EXPECT_NEAR(q.range->high_ms - q.range->low_ms, 0.0, 1e-12 * q.time_ms);
}

// An uncalibrated roofline is a bound, not a spread: no range, with or without a calibration
// that lacks the algorithm, or an entry made by hand without per-case ratios.
TEST(PredictedRange, UncalibratedHasNone) {
  const Card c = card("here", 2e11, 3e10);
  const ConvProblem p = parse_descriptor("mb4ic16ih32oc32kh3ph1").problem;
  EXPECT_FALSE(predict(direct_algorithm(), p, Pass::forward, c).range.has_value());
  Calibration other;
  other.by_algorithm["something.else"] = {0.5, 3, 0.25, 0.75};
  const Prediction lacking = predict(direct_algorithm(), p, Pass::forward, c, &other);
  EXPECT_FALSE(lacking.calibrated);
  EXPECT_FALSE(lacking.range.has_value());
  Calibration bare;
  bare.by_algorithm["test.direct"].efficiency = 0.5;  // no cases, no ratios
  const Prediction unranged = predict(direct_algorithm(), p, Pass::forward, c, &bare);
  EXPECT_TRUE(unranged.calibrated);
  EXPECT_FALSE(unranged.range.has_value());
}

}  // namespace
}  // namespace convlab
