#include "plancomparer.h"

#include "chartfeed.h"
#include "compareview.h"
#include "memorychart.h"
#include "plan/plantitle.h"
#include "plandocument.h"
#include "rooflinechart.h"
#include "timelinechart.h"

#include <algorithm>
#include <iterator>

namespace meshplan::app {

namespace {

QString titleOf(const model::Plan &plan)
{
    return QString::fromStdString(model::titleFollowsPlan(plan) ? model::generatedTitle(plan) : plan.title);
}

} // namespace

PlanComparer::PlanComparer(PlanDocument *document, views::CompareView *view, QObject *parent)
    : QObject(parent)
    , m_document(document)
    , m_view(view)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(0);
    connect(&m_timer, &QTimer::timeout, this, &PlanComparer::update);
    connect(m_view, &views::CompareView::chartShown, this, &PlanComparer::feedCandidate);
    connect(m_document, &PlanDocument::changed, this, [this] {
        if (followsDocument()) {
            m_stale = true;
            scheduleUpdate();
        }
    });
}

std::optional<QString> PlanComparer::pin(const std::optional<model::Plan> &baseline)
{
    const model::Plan plan = baseline ? *baseline : m_document->plan();
    auto evaluation = model::evaluate(plan);
    if (!evaluation)
        return tr("Cannot pin a baseline that does not evaluate: %1")
            .arg(QString::fromStdString(evaluation.error().toString()));
    m_baseline = plan;
    m_baselineEvaluation = std::move(evaluation).value();
    m_candidate.reset();
    m_candidateEvaluation.reset();
    m_stale = true;
    m_baselineFed = false;
    update();
    emit baselineChanged(true);
    return std::nullopt;
}

std::optional<QString> PlanComparer::compare(const model::Plan &baseline, const model::Plan &candidate)
{
    auto a = model::evaluate(baseline);
    if (!a)
        return tr("The baseline does not evaluate: %1").arg(QString::fromStdString(a.error().toString()));
    auto b = model::evaluate(candidate);
    if (!b)
        return tr("The plan to compare does not evaluate: %1").arg(QString::fromStdString(b.error().toString()));
    m_baseline = baseline;
    m_baselineEvaluation = std::move(a).value();
    m_candidate = candidate;
    m_candidateEvaluation = std::move(b).value();
    m_stale = true;
    m_baselineFed = false;
    update();
    emit baselineChanged(true);
    return std::nullopt;
}

void PlanComparer::clear()
{
    const bool had = m_baseline.has_value();
    m_baseline.reset();
    m_baselineEvaluation.reset();
    m_candidate.reset();
    m_candidateEvaluation.reset();
    m_stale = true;
    update();
    if (had)
        emit baselineChanged(false);
}

void PlanComparer::scheduleUpdate()
{
    if (m_stale && m_view->isVisible() && !m_view->visibleRegion().isEmpty() && !m_timer.isActive())
        m_timer.start();
}

void PlanComparer::update()
{
    m_stale = false;
    m_comparison.reset();
    if (!m_baseline) {
        m_view->setMessage({});
        return;
    }
    const model::Plan &candidate = m_candidate ? *m_candidate : m_document->plan();
    if (!m_candidate && !m_document->evaluation()) {
        m_view->setMessage(tr("The open plan cannot be evaluated, so it cannot be compared with the baseline:\n%1")
                               .arg(QString::fromStdString(m_document->evaluation().error().toString())));
        return;
    }
    const model::Evaluation &b = m_candidate ? *m_candidateEvaluation : *m_document->evaluation();
    const model::Evaluation &a = *m_baselineEvaluation;
    m_comparison = model::comparePlans(*m_baseline, a, candidate, b);
    m_view->setComparison(*m_comparison, tr("Baseline"), titleOf(*m_baseline),
                          m_candidate ? tr("Candidate") : tr("Open plan"), titleOf(candidate));
    using Side = views::CompareView::Side;
    // An edit of the open plan redraws its side only, and of that the chart on screen.
    if (!m_baselineFed) {
        feedMemory(m_view->memoryChart(Side::Baseline), a);
        feedTimeline(m_view->timelineChart(Side::Baseline), *m_baseline, a);
        feedRoofline(m_view->rooflineChart(Side::Baseline), *m_baseline, a);
        m_view->chartFed(Side::Baseline, 0);
        m_view->chartFed(Side::Baseline, 1);
        m_baselineFed = true;
    }
    std::fill(std::begin(m_candidateFed), std::end(m_candidateFed), false);
    feedCandidate(m_view->currentChart());
}

void PlanComparer::feedCandidate(int page)
{
    if (!m_comparison || page < 0 || page > 2 || m_candidateFed[page])
        return;
    const model::Plan &plan = m_candidate ? *m_candidate : m_document->plan();
    const model::Evaluation &evaluation = m_candidate ? *m_candidateEvaluation : *m_document->evaluation();
    using Side = views::CompareView::Side;
    switch (page) {
    case 0: feedMemory(m_view->memoryChart(Side::Candidate), evaluation); break;
    case 1: feedTimeline(m_view->timelineChart(Side::Candidate), plan, evaluation); break;
    case 2: feedRoofline(m_view->rooflineChart(Side::Candidate), plan, evaluation); break;
    }
    m_candidateFed[page] = true;
    m_view->chartFed(Side::Candidate, page);
    m_view->alignCharts();
}

} // namespace meshplan::app
