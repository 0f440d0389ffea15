// The planner window's explain panel (issue 18): which result path each clickable thing stands
// for (a summary row, a memory segment, a timeline bar, a roofline point), the dock that shows
// its derivation, and the evaluation with a Derivations sink that feeds it while it is visible.
// Kept apart from mainwindow.cpp, which the other features share.
#include "mainwindow.h"

#include "cost/evaluation.h"
#include "cost/steptimeline.h"
#include "explainpanel.h"
#include "memorychart.h"
#include "plan/plan.h"
#include "plandocument.h"
#include "planinspector.h"
#include "rooflinechart.h"
#include "timelinechart.h"

#include <QAction>
#include <QCursor>
#include <QDockWidget>
#include <QMenu>
#include <QStatusBar>

#include <map>

namespace meshplan::app {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

/// The path of a summary row's number (planSummaryHtml's keys).
std::string summaryRowPath(const QString &row, bool training)
{
    static const std::map<QString, std::string> paths = {
        {QStringLiteral("fits"), "memory_per_chip.total"},
        {QStringLiteral("capacity"), "memory_per_chip.capacity"},
        {QStringLiteral("step_time"), "step.time_s"},
        {QStringLiteral("compute"), "step.compute_s"},
        {QStringLiteral("exposed_comms"), "step.exposed_communication_s"},
        {QStringLiteral("communication"), "step.communication_s"},
        {QStringLiteral("bubble"), "step.bubble_s"},
        {QStringLiteral("interference"), "step.overlap_interference_s"},
        {QStringLiteral("mfu"), "mfu"},
        {QStringLiteral("tokens_per_s_per_chip"), "inference.tokens_per_s_per_chip"},
        {QStringLiteral("ttft"), "inference.time_to_first_token_s"},
        {QStringLiteral("decode_step"), "inference.decode_step_s"},
        {QStringLiteral("decode_mfu"), "serving.decode_mfu"},
        {QStringLiteral("max_batch"), "serving.max_batch"},
    };
    if (row == QStringLiteral("tokens_per_s"))
        return training ? "tokens_per_s" : "inference.tokens_per_s";
    const auto it = paths.find(row);
    return it == paths.end() ? std::string() : it->second;
}

/// The path of layer `layer` of the memory stack (MemoryChart: 0 params .. 4 KV cache). Every
/// bar maps to the most loaded chip's breakdown: the result derives memory_per_chip only.
std::string memoryLayerPath(int layer)
{
    static const char *kinds[] = {"params", "grads", "optimizer", "activations", "kv_cache"};
    if (layer < 0 || layer >= views::MemoryChart::kLayers)
        return {};
    return std::string("memory_per_chip.") + kinds[layer];
}

std::string collectivePath(int collective, const char *field)
{
    return "collectives[" + std::to_string(collective) + "]." + field;
}

/// The path of a timeline segment: its collective's time (exposed part for an exposed segment),
/// or the step's (or request's) term the lane shows.
std::string timelineSegmentPath(const model::TimelineSegment &segment)
{
    const std::string &kind = segment.kind;
    if (segment.collective >= 0)
        return collectivePath(segment.collective, kind == "exposed" ? "exposed_s" : "time_s");
    if (kind == "compute")
        return "step.compute_s";
    if (kind == "recompute")
        return "step.recompute_s";
    if (kind == "bubble")
        return "step.bubble_s";
    if (kind == "optimizer")
        return "step.optimizer_s";
    if (kind == "interference")
        return "step.overlap_interference_s";
    if (kind == "exposed")
        return "step.exposed_communication_s"; // pipeline fill and drain waits
    if (kind == "prefill")
        return "inference.prefill_s";
    if (kind == "decode")
        return segment.label.find("first token") != std::string::npos ? "inference.time_to_first_token_s"
                                                                       : "inference.decode_step_s";
    return {};
}

/// The path of a roofline point: a collective's time, or terms.operation_<i>_time_s for the
/// operation of `evaluation` it draws (names made unique with " #n" count repeats).
std::string rooflinePointPath(const model::RooflinePoint &point, const model::Evaluation &evaluation)
{
    if (point.collective >= 0)
        return collectivePath(point.collective, "time_s");
    std::string name = point.op;
    int occurrence = 1;
    if (const auto hash = name.rfind(" #"); hash != std::string::npos) {
        occurrence = std::atoi(name.c_str() + hash + 2);
        name.resize(hash);
    }
    for (std::size_t i = 0; i < evaluation.operations.size(); ++i)
        if (evaluation.operations[i].op == name && evaluation.operations[i].kind == point.kind && --occurrence <= 0)
            return "terms.operation_" + std::to_string(i) + "_time_s";
    return {};
}

/// Titles for the paths only the evaluation can name: collectives by purpose, operations by name.
std::map<std::string, QString> pathTitles(const model::Evaluation &evaluation)
{
    std::map<std::string, QString> titles;
    for (std::size_t i = 0; i < evaluation.collectives.size(); ++i) {
        const auto &c = evaluation.collectives[i];
        const QString name = QStringLiteral("%1 (%2)").arg(qs(c.purpose), qs(std::string(model::collectiveName(c.op))));
        titles[collectivePath(static_cast<int>(i), "time_s")] = MainWindow::tr("%1: time per step").arg(name);
        titles[collectivePath(static_cast<int>(i), "exposed_s")] = MainWindow::tr("%1: exposed time").arg(name);
    }
    for (std::size_t i = 0; i < evaluation.operations.size(); ++i)
        titles["terms.operation_" + std::to_string(i) + "_time_s"] =
            MainWindow::tr("%1: time per occurrence").arg(qs(evaluation.operations[i].op));
    return titles;
}

} // namespace

void MainWindow::createExplain()
{
    m_explainPanel = new views::ExplainPanel(this);
    m_explainDock = new QDockWidget(tr("Explain"), this);
    m_explainDock->setObjectName(QStringLiteral("explainDock"));
    m_explainDock->setWidget(m_explainPanel);
    addDockWidget(Qt::RightDockWidgetArea, m_explainDock);
    // Below the inspector, so the plan stays editable while a number is explained.
    if (auto *inspector = findChild<QDockWidget *>(QStringLiteral("inspectorDock")))
        splitDockWidget(inspector, m_explainDock, Qt::Vertical);
    m_explainDock->hide();
    connect(m_explainDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (!visible)
            return;
        // The first time, half of the inspector's height: a formula, its numbers and the inputs
        // need it, and the summary stays in view above.
        auto *inspector = findChild<QDockWidget *>(QStringLiteral("inspectorDock"));
        if (!m_explainSized && inspector && inspector->isVisible() && !m_explainDock->isFloating()) {
            m_explainSized = true;
            const int both = inspector->height() + m_explainDock->height();
            resizeDocks({inspector, m_explainDock}, {both * 45 / 100, both * 55 / 100}, Qt::Vertical);
        }
        updateExplain();
    });

    QAction *toggle = m_explainDock->toggleViewAction();
    toggle->setText(tr("&Explain panel"));
    toggle->setObjectName(QStringLiteral("explainPanelAction"));
    auto *explainAction = new QAction(tr("E&xplain this number"), this);
    explainAction->setObjectName(QStringLiteral("explainAction"));
    explainAction->setShortcut(QKeySequence(Qt::Key_F1));
    explainAction->setToolTip(tr("Shows how the number under the mouse (or the one last clicked) is worked out"));
    connect(explainAction, &QAction::triggered, this, &MainWindow::explainUnderCursor);
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(toggle);
    m_viewMenu->addAction(explainAction);
    addAction(explainAction); // F1 works wherever the focus is in the window

    connect(m_inspector, &views::PlanInspector::summaryRowClicked, this, [this](const QString &row) {
        explain(summaryRowPath(row, m_document->plan().kind == model::WorkloadKind::Training), true);
    });
    connect(m_memory, &views::MemoryChart::segmentClicked, this,
            [this](int, int layer) { explain(memoryLayerPath(layer), true); });
    connect(m_timeline, &views::TimelineChart::segmentSelected, this, [this](int index) {
        const auto &segments = m_timeline->timeline().segments;
        if (index >= 0 && static_cast<std::size_t>(index) < segments.size())
            explain(timelineSegmentPath(segments[static_cast<std::size_t>(index)]), true);
    });
    connect(m_roofline, &views::RooflineChart::pointSelected, this, [this](int index) {
        const model::Evaluation *drawn = m_preview ? &m_preview->evaluation
                                         : m_document->evaluation() ? &*m_document->evaluation()
                                                                    : nullptr;
        const auto &points = m_roofline->roofline().points;
        if (drawn && index >= 0 && static_cast<std::size_t>(index) < points.size())
            explain(rooflinePointPath(points[static_cast<std::size_t>(index)], *drawn), true);
    });
}

void MainWindow::explain(const std::string &path, bool show)
{
    if (path.empty())
        return;
    m_explainPath = path;
    m_explainPanel->showPath(path);
    if (show && !m_explainDock->isVisible())
        m_explainDock->show(); // updateExplain follows from visibilityChanged
    updateExplain();
}

void MainWindow::explainUnderCursor()
{
    // A number under the mouse is explained; else the one last clicked.
    const QPoint global = QCursor::pos();
    // The chart on screen whose area holds the mouse (QApplication::widgetAt finds no window
    // on some platforms, offscreen among them).
    const auto under = [&global](QWidget *chart) {
        return chart->isVisible() && !chart->visibleRegion().isEmpty()
               && chart->rect().contains(chart->mapFromGlobal(global));
    };
    std::string path;
    if (under(m_memory)) {
        path = memoryLayerPath(m_memory->segmentAt(m_memory->mapFromGlobal(QPointF(global))).second);
    } else if (under(m_timeline)) {
        const int index = m_timeline->segmentAt(m_timeline->mapFromGlobal(QPointF(global)));
        if (index >= 0) // segmentAt gives a drawn segment's index
            path = timelineSegmentPath(m_timeline->timeline().segments[static_cast<std::size_t>(index)]);
    } else if (under(m_roofline)) {
        const int index = m_roofline->pointAt(m_roofline->mapFromGlobal(QPointF(global)));
        const auto &evaluation = m_document->evaluation();
        if (index >= 0 && (m_preview || evaluation))
            path = rooflinePointPath(m_roofline->roofline().points[static_cast<std::size_t>(index)],
                                     m_preview ? m_preview->evaluation : *evaluation);
    }
    if (path.empty())
        path = m_explainPath;
    if (!path.empty())
        explain(path, false);
    m_explainDock->show();
    m_explainDock->raise();
}

void MainWindow::updateExplain()
{
    // Derivations cost an evaluation in each mode: made only for a panel someone can see, and
    // once per plan (the charts' updates call here too, for a previewed search result).
    if (!m_explainDock || !m_explainDock->isVisible())
        return;
    const model::Plan &plan = m_preview ? m_preview->plan : m_document->plan();
    std::string key = model::planToJson(plan).dump();
    if (key == m_explainedPlan)
        return;
    m_explainedPlan = std::move(key);
    model::Derivations achievable;
    model::Derivations ideal;
    const auto evaluation = model::evaluate(plan, model::CostMode::Achievable, &achievable);
    if (!evaluation) {
        m_explainPanel->setMessage(tr("This plan cannot be evaluated: %1").arg(qs(evaluation.error().toString())));
        return;
    }
    if (!model::evaluate(plan, model::CostMode::Ideal, &ideal))
        ideal.clear();
    m_explainPanel->setPathTitles(pathTitles(*evaluation));
    m_explainPanel->setDerivations(achievable, ideal);
}

} // namespace meshplan::app
