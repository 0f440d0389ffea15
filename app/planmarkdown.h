#pragma once
// A plan and its summary numbers as Markdown, for pasting into chat or a design doc
// (Edit > Copy Summary as Markdown).

#include "base/expected.h"
#include "cost/evaluation.h"
#include "plan/plan.h"

#include <QString>

namespace meshplan::app {

/// The plan's title as a heading, then two tables: the plan (model, cluster, parallelism and
/// where each role sits, workload) and its summary (fits, step time or latency, MFU, tokens/s,
/// bound, chips), then the warnings. A plan that cannot be evaluated gets the reason instead of
/// the summary table.
QString planMarkdown(const model::Plan &plan, const model::Expected<model::Evaluation> &evaluation);

/// `text` safe inside a Markdown table cell: pipes escaped, line breaks as spaces.
QString markdownCell(const QString &text);

} // namespace meshplan::app
