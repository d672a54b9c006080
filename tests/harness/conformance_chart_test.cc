// The per-step chart of a conform pair (harness/report/conformance_chart.h):
// one point per measured step and metric, titled with its value, the
// deviating ones red, zeros on the floor, values that are not finite left
// out and named, the NMSE threshold drawn; nothing for a pair not measured.
#include "harness/report/conformance_chart.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace samebits::harness::report {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

StepConformance Step(int index, double nmse, double kld, bool deviates = false) {
  StepConformance s;
  s.step_index = index;
  s.nmse = nmse;
  s.kl_divergence = kld;
  s.deviates = deviates;
  return s;
}

PairConformance Pair(std::vector<StepConformance> steps) {
  PairConformance p;
  p.compared = true;
  p.steps = std::move(steps);
  return p;
}

TEST(ConformanceChart, EveryStepIsAPointTitledWithItsValue) {
  const std::string svg = StepMetricsSvg(
      Pair({Step(0, 1e-9, 2e-7), Step(1, 3e-8, 5e-6), Step(2, 1e-3, 0.25, true)}), 1e-4);
  ASSERT_EQ(svg.rfind("<svg", 0), 0u) << svg;
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  EXPECT_EQ(Count(svg, "<circle"), 6u);  // 3 steps x 2 metrics
  EXPECT_NE(svg.find("<title>step 1: NMSE 3e-08</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>step 2: KLD 0.25 (deviates)</title>"), std::string::npos) << svg;
  // Only the deviating step is red, in both panels.
  EXPECT_EQ(Count(svg, "fill=\"#a31515\" stroke=\"#a31515\""), 2u) << svg;
  EXPECT_NE(svg.find("class=\"threshold\""), std::string::npos);
  EXPECT_NE(svg.find("<title>threshold 0.0001</title>"), std::string::npos) << svg;
  // The decades from the smallest value's to the largest's are labelled.
  EXPECT_NE(svg.find(">1e-9</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">1e-3</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">step 0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">step 2</text>"), std::string::npos);
  // No script, no external reference: the report stays self-contained.
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
}

TEST(ConformanceChart, ZerosSitOnTheFloorAndValuesNotFiniteAreNamed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::string svg =
      StepMetricsSvg(Pair({Step(0, 0, 0), Step(1, nan, inf, true), Step(2, 0, 1e-5)}), 1e-4);
  EXPECT_EQ(Count(svg, "<circle"), 4u) << svg;  // step 1 is drawn in neither panel
  EXPECT_NE(svg.find("<title>step 0: NMSE 0</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("fill=\"white\""), std::string::npos) << svg;  // a zero is hollow
  EXPECT_EQ(Count(svg, "not finite at step 1 (not drawn)"), 2u) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
}

TEST(ConformanceChart, ThePictureDependsOnTheValues) {
  // A chart that drew the same whatever it was given would pass the tests
  // above only by its titles; its coordinates must move too.
  const auto points = [](double nmse) {
    const std::string svg = StepMetricsSvg(Pair({Step(0, 1e-8, 1e-8), Step(1, nmse, 1e-8)}), 1e-4);
    const size_t at = svg.find("<polyline points=\"");
    return svg.substr(at, svg.find('"', at + 18) - at);
  };
  EXPECT_NE(points(1e-7), points(1e-5));
  EXPECT_EQ(points(1e-7), points(1e-7));
}

TEST(ConformanceChart, APairNotMeasuredHasNoChart) {
  EXPECT_EQ(StepMetricsSvg(PairConformance{}, 1e-4), "");
  PairConformance not_compared = Pair({Step(0, 0, 0)});
  not_compared.compared = false;
  EXPECT_EQ(StepMetricsSvg(not_compared, 1e-4), "");
  // One step: one point per panel, in the middle, labelled once.
  const std::string one = StepMetricsSvg(Pair({Step(7, 1e-6, 1e-6)}), 1e-4);
  EXPECT_EQ(Count(one, "<circle"), 2u);
  EXPECT_EQ(Count(one, ">step 7</text>"), 2u) << one;
}

}  // namespace
}  // namespace samebits::harness::report
