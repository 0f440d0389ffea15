#pragma once
// The plan's verdict in a few lines: fits or not, step time (or latency and throughput), MFU,
// tokens/s, the binding resource and the warnings in words.

#include "base/expected.h"
#include "cost/evaluation.h"
#include "plan/plan.h"

#include <QString>

namespace meshplan::views {

/// Rich text for the inspector's summary.
QString planSummaryHtml(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation);
/// One line for the status bar: "fits · 12.3 s/step · MFU 45% · compute-bound".
QString planSummaryLine(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation);

} // namespace meshplan::views
