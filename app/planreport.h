#pragma once
// A report a team can forward: the model, the cluster, the plan, the summary, every chart, the
// warnings and the derivations of the headline numbers, as self-contained HTML or as a PDF.

#include "plan/plan.h"

#include <QString>

#include <optional>
#include <vector>

namespace meshplan::app {

/// One plan of a report (a deck gives one per slide).
struct ReportSection {
    std::optional<model::Plan> plan; ///< empty for a deck's slide whose plan is missing or bad
    QString heading; ///< the section's title; the plan's own title when empty
    QString notes;   ///< a slide's speaker notes, printed under the heading
    QString problem; ///< why there is no plan
};

/// The report as one HTML document: images embedded as data URLs, no external loads.
QString reportHtml(const std::vector<ReportSection> &sections, bool dark);

/// Writes the report to `path` (.html or .pdf, atomically: all of it or nothing). The PDF draws the
/// charts as vectors. Needs a QApplication (the offscreen platform will do). A message naming the
/// file and the cause on failure.
std::optional<QString> writeReport(const std::vector<ReportSection> &sections, const QString &path, bool dark);

} // namespace meshplan::app
