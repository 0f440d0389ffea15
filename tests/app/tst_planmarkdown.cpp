// Edit > Copy Summary as Markdown (issue 19): the plan and its summary numbers as Markdown tables
// that paste into chat or a design doc, the numbers those of the evaluation.
#include "planmarkdown.h"
#include "testplans.h"

#include <QRegularExpression>
#include <QtTest>

#include <cmath>

using namespace meshplan;
using meshplan::testing::loadPlan;
namespace m = meshplan::model;

namespace {

/// The value cell of the table row named `name` ("" when there is none).
QString cell(const QString &markdown, const QString &name)
{
    const QRegularExpression row(QStringLiteral("^\\| %1 \\| (.*) \\|$").arg(QRegularExpression::escape(name)),
                                 QRegularExpression::MultilineOption);
    const auto match = row.match(markdown);
    return match.hasMatch() ? match.captured(1) : QString();
}

/// The leading number of a cell: "57.1%" -> 57.1, "3,424,211 (418 per chip)" -> 3424211.
double leadingNumber(QString text)
{
    text.remove(QLatin1Char(','));
    const auto match = QRegularExpression(QStringLiteral("^[0-9.]+")).match(text);
    return match.hasMatch() ? match.captured(0).toDouble() : -1;
}

} // namespace

class TestPlanMarkdown : public QObject
{
    Q_OBJECT

private slots:
    void trainingPlan()
    {
        const m::Plan plan = loadPlan(QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-70b-v5p-16x16x32.meshplan"));
        const auto evaluation = m::evaluate(plan);
        QVERIFY(evaluation);
        const QString md = app::planMarkdown(plan, evaluation);
        qInfo().noquote() << md; // as it pastes
        QVERIFY2(md.startsWith(QStringLiteral("### ")), qPrintable(md));
        // The book's ch. 6 layout: 8192 v5p chips as fsdp 2048 x tensor 4.
        QCOMPARE(cell(md, QStringLiteral("Model")), QStringLiteral("LLaMA-3 70B"));
        QCOMPARE(cell(md, QStringLiteral("Cluster")), QStringLiteral("8192 × TPU v5p (16x16x32)"));
        QCOMPARE(cell(md, QStringLiteral("Parallelism")), QStringLiteral("fsdp 2048 × tensor 4"));
        QVERIFY(cell(md, QStringLiteral("Placement")).contains(QStringLiteral("tensor on x")));
        QVERIFY(cell(md, QStringLiteral("Workload")).startsWith(QStringLiteral("training: ")));
        QCOMPARE(cell(md, QStringLiteral("Chips")), QStringLiteral("8192"));
        // Every number is the evaluation's, to the three figures printed (0.5% relative).
        QVERIFY(cell(md, QStringLiteral("Fits")).startsWith(QStringLiteral("yes: ")));
        const double stepS = leadingNumber(cell(md, QStringLiteral("Step time")));
        QVERIFY(cell(md, QStringLiteral("Step time")).endsWith(QStringLiteral(" s")));
        QVERIFY2(std::abs(stepS - evaluation->step.time) <= 0.005 * evaluation->step.time, qPrintable(md));
        const double mfu = leadingNumber(cell(md, QStringLiteral("MFU")));
        QVERIFY2(std::abs(mfu - 100 * evaluation->mfu) <= 0.005 * 100 * evaluation->mfu, qPrintable(md));
        // Tokens/s in whole tokens: 2048 sequences x 4096 tokens per step over the step time.
        const double tokens = leadingNumber(cell(md, QStringLiteral("Tokens/s")));
        QVERIFY2(std::abs(tokens - 2048.0 * 4096.0 / evaluation->step.time) <= 0.005 * tokens, qPrintable(md));
        QCOMPARE(cell(md, QStringLiteral("Bound by")), QString::fromStdString(evaluation->bound));
        // Two tables with their separator rows: a Markdown reader draws them as tables.
        QCOMPARE(md.count(QStringLiteral("|---|---|\n")), 2);
    }

    void servingPlan()
    {
        const m::Plan plan = loadPlan(QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-70b-int8-v5e-serving.meshplan"));
        const auto evaluation = m::evaluate(plan);
        QVERIFY(evaluation && evaluation->inference);
        const QString md = app::planMarkdown(plan, evaluation);
        qInfo().noquote() << md;
        QVERIFY(cell(md, QStringLiteral("Workload")).startsWith(QStringLiteral("serving: ")));
        QVERIFY(cell(md, QStringLiteral("Step time")).isEmpty());
        const double decode = leadingNumber(cell(md, QStringLiteral("Decode step")));
        QVERIFY(decode > 0);
        const double tokens = leadingNumber(cell(md, QStringLiteral("Tokens/s")));
        QVERIFY2(std::abs(tokens - evaluation->inference->tokensPerS) <= 0.5, qPrintable(md));
        QCOMPARE(leadingNumber(cell(md, QStringLiteral("Largest batch that fits"))), std::round(evaluation->serving.maxBatch));
    }

    void unevaluablePlanSaysWhy()
    {
        const m::Plan plan = loadPlan(QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-70b-v5p-16x16x32.meshplan"));
        const m::Expected<m::Evaluation> failed(m::Error{"parallelism.tensor", "7 does not divide the 64 heads"});
        const QString md = app::planMarkdown(plan, failed);
        QCOMPARE(cell(md, QStringLiteral("Parallelism")), QStringLiteral("fsdp 2048 × tensor 4"));
        QVERIFY(md.contains(QStringLiteral("**This plan cannot be evaluated:** parallelism.tensor: 7 does not divide the 64 heads")));
        QVERIFY(cell(md, QStringLiteral("Step time")).isEmpty());
    }

    void cellsAreEscaped()
    {
        QCOMPARE(app::markdownCell(QStringLiteral("a | b\nc")), QStringLiteral("a \\| b c"));
        QCOMPARE(app::markdownCell(QStringLiteral("back\\slash")), QStringLiteral("back\\\\slash"));
        m::Plan plan = loadPlan(QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-70b-v5p-16x16x32.meshplan"));
        plan.model.name = "my | model";
        const QString md = app::planMarkdown(plan, m::evaluate(plan));
        QVERIFY(md.contains(QStringLiteral("| Model | my \\| model |\n")));
    }
};

QTEST_GUILESS_MAIN(TestPlanMarkdown)
#include "tst_planmarkdown.moc"
