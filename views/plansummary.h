#pragma once
// The plan's verdict in a few lines: fits or not, step time (or latency and throughput), MFU,
// tokens/s, the binding resource, the track record on published runs like it and the warnings
// in words.

#include "base/expected.h"
#include "cost/evaluation.h"
#include "plan/plan.h"

#include <QColor>
#include <QString>

namespace meshplan::views {

/// Rich text for the inspector's summary. With a valid `linkColor`, each number's value is a link
/// "explain:ROW" (ROW: fits, capacity, step_time, compute, exposed_comms, communication, bubble, mfu,
/// tokens_per_s, tokens_per_s_per_chip, ttft, decode_step, decode_mfu, max_batch) drawn in that colour without underline, so the rows look
/// as they did and a click can ask for the number's explanation.
QString planSummaryHtml(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation,
                        const QColor &linkColor = QColor());
/// One line for the status bar: "fits · 12.3 s/step · MFU 45% · compute-bound".
QString planSummaryLine(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation);

} // namespace meshplan::views
