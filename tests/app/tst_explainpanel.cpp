// The explain panel (issue 18): the formula typesetter on nested formulas (no overlaps, nothing
// outside its size, sizes that grow with nesting), the panel on hand-made derivations (formula,
// values put in, drill-down and Back, the ideal beside the achievable), and in the window: a
// summary row, a memory segment, a collective and a roofline point picked as a user would, the
// panel following an edit, F1. PNGs of the panel (three sizes, light and dark) go to
// $MESHPLAN_EXPLAIN_PNG_DIR, else QDir::tempPath()/meshplan-explain, to be looked at.
#include "chartstyle.h"
#include "explainpanel.h"
#include "formularenderer.h"
#include "mainwindow.h"
#include "memorychart.h"
#include "plandocument.h"
#include "planinspector.h"
#include "rooflinechart.h"
#include "timelinechart.h"
#include "windowdriver.h"

#include "base/expression.h"
#include "base/units.h"
#include "cost/evaluation.h"
#include "cost/steptimeline.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QStandardPaths>
#include <QStyleFactory>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include <cmath>

using namespace meshplan;
using namespace meshplan::testing;
using meshplan::views::ExplainPanel;
using meshplan::views::FormulaRenderer;

namespace {

QString outDir()
{
    QString dir = qEnvironmentVariable("MESHPLAN_EXPLAIN_PNG_DIR");
    if (dir.isEmpty())
        dir = QDir::tempPath() + QStringLiteral("/meshplan-explain");
    QDir().mkpath(dir);
    return dir;
}

FormulaRenderer typeset(const char *text, const std::map<std::string, double> *values = nullptr)
{
    const auto parsed = model::Expression::parse(text);
    if (!parsed)
        qFatal("cannot parse %s", text);
    QFont font(QStringLiteral("DejaVu Sans"));
    font.setPointSizeF(13);
    return FormulaRenderer(parsed->root(), font, values);
}

/// Two ink boxes overlap by more than `tolerance` pixels both ways.
bool overlap(const QRectF &a, const QRectF &b, qreal tolerance = 0.75)
{
    const QRectF i = a.intersected(b);
    return i.width() > tolerance && i.height() > tolerance;
}

QString describe(const QRectF &r)
{
    return QStringLiteral("(%1,%2 %3x%4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

/// Empty when no glyph overlaps another glyph or a stroke and all ink lies inside size(); else what
/// is wrong. (Strokes may meet one another: a radical's sign and its bar.)
QString checkLayout(const FormulaRenderer &f)
{
    const auto text = f.textInk();
    const auto strokes = f.strokeInk();
    const QRectF all = QRectF(QPointF(0, 0), f.size()).adjusted(-0.5, -0.5, 0.5, 0.5);
    for (const auto &r : text)
        if (!all.contains(r))
            return QStringLiteral("glyph %1 outside %2").arg(describe(r), describe(all));
    for (const auto &r : strokes)
        if (!all.contains(r))
            return QStringLiteral("stroke %1 outside %2").arg(describe(r), describe(all));
    for (std::size_t i = 0; i < text.size(); ++i) {
        for (std::size_t j = i + 1; j < text.size(); ++j)
            if (overlap(text[i], text[j]))
                return QStringLiteral("glyphs %1 and %2 overlap").arg(describe(text[i]), describe(text[j]));
        for (const auto &s : strokes)
            if (overlap(text[i], s))
                return QStringLiteral("glyph %1 and stroke %2 overlap").arg(describe(text[i]), describe(s));
    }
    return {};
}

void savePng(const FormulaRenderer &f, const QString &name, bool dark)
{
    const QSize size = (f.size() + QSizeF(16, 16)).toSize();
    QImage image(size * 2, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(2);
    image.fill(dark ? QColor(0x2b, 0x2d, 0x31) : Qt::white);
    QPainter painter(&image);
    f.paint(&painter, QPointF(8, 8), dark ? QColor(0xe6, 0xe6, 0xe6) : Qt::black,
            dark ? QColor(0x8a, 0xc4, 0xff) : QColor(0x0b, 0x57, 0xb0));
    painter.end();
    QVERIFY(image.save(outDir() + QLatin1Char('/') + name));
}

/// Book ch. 6 numbers, by hand: 1.2e18 FLOPs on 8192 v5p chips (459 TFLOP/s bf16) at a 0.72
/// FLOPs fraction take 1.2e18 / (8192 x 4.59e14 x 0.72) = 0.44324 s; the ideal (fraction 1) 0.31914 s.
constexpr double kFlops = 1.2e18;
constexpr double kChips = 8192;
constexpr double kPeak = 4.59e14;
constexpr double kFraction = 0.72;
constexpr double kExposed = 0.0213;

model::Derivations handMade(bool ideal)
{
    const double fraction = ideal ? 1.0 : kFraction;
    const double compute = kFlops / (kChips * kPeak * fraction);
    const double exposed = ideal ? 0.0 : kExposed;
    model::Derivations d;
    d["step.compute_s"] = {"flops / (chips * peak_flops * flops_fraction)",
                           {{"flops", kFlops, "", "6 x params x tokens"},
                            {"chips", kChips, "", "plan: hardware.topology"},
                            {"peak_flops", kPeak, "", "catalog: TPU v5p bf16"},
                            {"flops_fraction", fraction, "", ideal ? "ideal" : "achievable: MaxText LLaMA-3 runs"}},
                           compute,
                           "The step's FLOPs over the chips' rate.",
                           "6",
                           "How to think about training"};
    d["step.time_s"] = {"compute_s + exposed_comm_s + bubble_s",
                        {{"compute_s", compute, "step.compute_s", ""},
                         {"exposed_comm_s", exposed, "step.exposed_communication_s", ""},
                         {"bubble_s", 0.0, "", "no pipeline"}},
                        compute + exposed,
                        "Compute, plus the communication compute does not hide, plus the bubble.",
                        "6",
                        "Step time"};
    return d;
}

QLabel *summaryLabel(views::PlanInspector *inspector)
{
    for (auto *label : inspector->findChildren<QLabel *>())
        if (label->text().contains(QStringLiteral("explain:")))
            return label;
    return nullptr;
}

QString secs(double s)
{
    return views::formatPathValue("x_s", s).plain();
}

} // namespace

class TestExplainPanel : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_autosave;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        qInfo() << "PNGs in" << outDir();
    }

    void rendererPlacesParenthesesByPrecedence()
    {
        QCOMPARE(typeset("flops / (chips * peak * eff)").plainText(), QStringLiteral("flops / (chips × peak × eff)"));
        QCOMPARE(typeset("(a + b) * c").plainText(), QStringLiteral("(a + b) × c"));
        QCOMPARE(typeset("a + (b * c)").plainText(), QStringLiteral("a + b × c")); // not needed: dropped
        QCOMPARE(typeset("a - (b + c)").plainText(), QStringLiteral("a − (b + c)"));
        QCOMPARE(typeset("a + (b + c)").plainText(), QStringLiteral("a + (b + c)")); // the text's grouping of terms
        QCOMPARE(typeset("(a / b) ** 2").plainText(), QStringLiteral("(a / b)^2"));
        QCOMPARE(typeset("a * -b").plainText(), QStringLiteral("a × (−b)"));
        QCOMPARE(typeset("ceil(n / k) * sqrt(x)").plainText(), QStringLiteral("⌈n / k⌉ × √(x)"));
        QCOMPARE(typeset("max(t_math, t_comms)").plainText(), QStringLiteral("max(t_math, t_comms)"));
        QCOMPARE(typeset("log2(n)").plainText(), QStringLiteral("log₂(n)"));
    }

    void rendererPutsValuesIn()
    {
        const std::map<std::string, double> values{
            {"flops", 1.2e18}, {"chips", 8192}, {"t_comms_s", 0.0213}, {"kv_bytes", 2.0 * 1024 * 1024 * 1024}, {"eff", 0.72}};
        QCOMPARE(typeset("flops / (chips * eff) + t_comms_s", &values).plainText(),
                 QStringLiteral("1.20 EFLOP / (8192 × 0.72) + 21.3 ms"));
        // A power of a value with a unit is bracketed; bytes read as the memory chart reads them.
        QCOMPARE(typeset("kv_bytes ** 2", &values).plainText(), QStringLiteral("(2.00 GiB)^2"));
        QCOMPARE(views::formatNamedValue("t_math", 4.2e-6).plain(), QStringLiteral("4.20 µs"));
        QCOMPARE(views::formatNamedValue("tokens", 3.3e-5).plain(), QStringLiteral("3.3×10^-5"));
        QCOMPARE(views::formatNamedValue("hbm_bandwidth", 2.765e12).plain(), QStringLiteral("2.77 TB/s"));
    }

    void rendererGrowsWithNestingWithoutOverlap()
    {
        const FormulaRenderer one = typeset("a / b");
        const FormulaRenderer two = typeset("a / (b / c)");
        const FormulaRenderer three = typeset("a / (b / (c / d))");
        QVERIFY(two.size().height() > one.size().height());
        QVERIFY(three.size().height() > two.size().height());
        const FormulaRenderer plain = typeset("x");
        const FormulaRenderer squared = typeset("x ** 2");
        QVERIFY(squared.size().height() >= plain.size().height());
        QVERIFY(squared.size().width() > plain.size().width());
        const FormulaRenderer tower = typeset("x ** (y ** 2)");
        QVERIFY(tower.size().height() > squared.size().height());
        const char *nested = "max(t_math, t_comms) / (1 + (a / (b + c / d)) ** 2) + ceil(n_layers / k) * sqrt(x_y) - "
                             "floor(min(p, q) / 2)";
        const std::map<std::string, double> values{{"t_math", 0.0123},   {"t_comms", 4.5e-3}, {"a", 3},   {"b", 1e9},
                                                   {"c", 7},             {"d", 2e-4},         {"n_layers", 80},
                                                   {"k", 4},             {"x_y", 1.44e20},    {"p", 12}, {"q", 0.5}};
        for (const auto *values_ : {static_cast<const std::map<std::string, double> *>(nullptr), &values}) {
            const FormulaRenderer f = typeset(nested, values_);
            const QString problem = checkLayout(f);
            QVERIFY2(problem.isEmpty(), qPrintable(problem + QStringLiteral(" in ") + f.plainText()));
        }
        for (const auto *f : {&one, &two, &three, &squared, &tower})
            QVERIFY2(checkLayout(*f).isEmpty(), qPrintable(f->plainText()));
        savePng(typeset(nested), QStringLiteral("formula-nested-light.png"), false);
        savePng(typeset(nested, &values), QStringLiteral("formula-nested-values-dark.png"), true);
        savePng(three, QStringLiteral("formula-three-fractions.png"), false);
    }

    void panelShowsFormulaValuesAndBook()
    {
        ExplainPanel panel;
        panel.resize(380, 560);
        QVERIFY(panel.isEmptyState());
        panel.setDerivations(handMade(false), handMade(true));
        panel.showPath("step.time_s");
        QVERIFY(!panel.isEmptyState());
        QCOMPARE(panel.titleText(), QStringLiteral("Step time"));
        // 0.44324 + 0.0213 = 0.46454 s.
        QCOMPARE(panel.valueText(), QStringLiteral("465 ms"));
        QCOMPARE(panel.formulaText(), QStringLiteral("compute_s + exposed_comm_s + bubble_s"));
        QCOMPARE(panel.substitutedText(), QStringLiteral("443 ms + 21.3 ms + 0 s = 465 ms"));
        QVERIFY(panel.inputsText().contains(QStringLiteral("no pipeline")));
        QCOMPARE(panel.inputLinks(), (std::vector<std::string>{"step.compute_s", "step.exposed_communication_s"}));
        QVERIFY(panel.chapterText().contains(QStringLiteral("Training LLaMA 3 on TPUs")));
        QVERIFY(panel.chapterText().contains(QStringLiteral("https://jax-ml.github.io/scaling-book/applied-training/")));
        QVERIFY(panel.wordsText().startsWith(QStringLiteral("Compute, plus")));
        QVERIFY(panel.idealText().contains(QStringLiteral("ideal (book): 319 ms · achievable: 465 ms")));
    }

    void panelDrillsIntoInputsAndBack()
    {
        ExplainPanel panel;
        panel.resize(380, 560);
        panel.show();
        panel.setDerivations(handMade(false), handMade(true));
        panel.showPath("step.time_s");
        auto *inputs = panel.findChild<QLabel *>(QStringLiteral("explainInputs"));
        QVERIFY(inputs);
        QVERIFY(inputs->text().contains(QStringLiteral("href='explain:step.compute_s'")));
        emit inputs->linkActivated(QStringLiteral("explain:step.compute_s")); // the link a click activates
        QCOMPARE(panel.currentPath(), std::string("step.compute_s"));
        QVERIFY(panel.canGoBack());
        QCOMPARE(panel.formulaText(), QStringLiteral("flops / (chips × peak_flops × flops_fraction)"));
        QCOMPARE(panel.substitutedText(), QStringLiteral("1.20 EFLOP / (8192 × 459 TFLOP/s × 0.72) = 443 ms"));
        // The achievable-efficiency factor is named as the difference from the book's number.
        QVERIFY(panel.idealText().contains(QStringLiteral("ideal (book): 319 ms · achievable: 443 ms")));
        QVERIFY(panel.idealText().contains(QStringLiteral("1 → 0.72")));
        QVERIFY(!panel.idealText().contains(QStringLiteral("8192")));
        QTest::mouseClick(panel.findChild<QToolButton *>(QStringLiteral("explainBack")), Qt::LeftButton);
        QCOMPARE(panel.currentPath(), std::string("step.time_s"));
        QVERIFY(!panel.canGoBack());
        // An input without a derivation of its own says so rather than showing nothing.
        panel.drillInto("step.exposed_communication_s");
        QVERIFY(panel.isEmptyState());
        panel.back();
        QCOMPARE(panel.titleText(), QStringLiteral("Step time"));
        // New numbers keep the path on show (a live edit).
        model::Derivations faster = handMade(false);
        faster["step.time_s"].values[1].value = 0.0;
        faster["step.time_s"].value = faster["step.compute_s"].value;
        panel.setDerivations(faster);
        QCOMPARE(panel.valueText(), QStringLiteral("443 ms"));
        QVERIFY(panel.idealText().isEmpty());
    }

    void panelPngsLightAndDark_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("dark");
        for (const QSize size : {QSize(300, 440), QSize(380, 600), QSize(560, 760)})
            for (const bool dark : {false, true})
                QTest::addRow("%dx%d-%s", size.width(), size.height(), dark ? "dark" : "light") << size << dark;
    }

    void panelPngsLightAndDark()
    {
        QFETCH(QSize, size);
        QFETCH(bool, dark);
        ExplainPanel panel;
        QPalette palette = QApplication::style()->standardPalette();
        if (dark)
            palette = views::darkPalette(palette);
        panel.setPalette(palette);
        panel.resize(size);
        panel.setDerivations(handMade(false), handMade(true));
        panel.showPath("step.time_s");
        panel.drillInto("step.compute_s");
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QString name = QStringLiteral("panel-%1x%2-%3.png").arg(size.width()).arg(size.height()).arg(dark ? "dark" : "light");
        QVERIFY(panel.grab().save(outDir() + QLatin1Char('/') + name));
        // Nothing is cut off on the right: the formulas fit, shrunk at most to their limit.
        for (auto *view : panel.findChildren<views::FormulaView *>())
            QVERIFY2(view->width() >= view->minimumSizeHint().width(), qPrintable(view->objectName()));
    }

    /// The model's own derivations of the default plan, whole, to look at: the step's compute, a
    /// collective and the activations, light and dark.
    void realDerivationsPngs()
    {
        auto window = showTestWindow(m_autosave.path());
        QVERIFY(window);
        model::Derivations achievable;
        model::Derivations ideal;
        const auto evaluation = model::evaluate(window->document()->plan(), model::CostMode::Achievable, &achievable);
        QVERIFY(evaluation);
        QVERIFY(model::evaluate(window->document()->plan(), model::CostMode::Ideal, &ideal));
        for (const bool dark : {false, true}) {
            for (const std::string path : {"step.compute_s", "collectives[0].time_s", "memory_per_chip.activations"}) {
                ExplainPanel panel;
                QPalette palette = QApplication::style()->standardPalette();
                if (dark)
                    palette = views::darkPalette(palette);
                panel.setPalette(palette);
                panel.resize(420, 900);
                panel.setDerivations(achievable, ideal);
                panel.showPath(path);
                QVERIFY2(!panel.isEmptyState(), path.c_str());
                QCOMPARE(panel.valueText(), views::formatPathValue(path, achievable.at(path).value).plain());
                panel.show();
                QVERIFY(QTest::qWaitForWindowExposed(&panel));
                QString name = QString::fromStdString(path).replace(QRegularExpression(QStringLiteral("[^a-z0-9_]+")),
                                                                    QStringLiteral("-"));
                QVERIFY(panel.grab().save(outDir() + QStringLiteral("/real-%1-%2.png").arg(name, dark ? "dark" : "light")));
            }
        }
    }

    void windowExplainsSummaryMemoryCollectiveAndRoofline()
    {
        auto window = showTestWindow(m_autosave.path());
        QVERIFY(window);
        const auto &evaluation = window->document()->evaluation();
        QVERIFY(evaluation);
        auto *panel = window->explainPanel();
        QVERIFY(!window->explainDock()->isVisible());

        // 1. A summary row: the step time, clicked as a link.
        QLabel *summary = summaryLabel(window->inspector());
        QVERIFY(summary);
        QVERIFY(summary->text().contains(QStringLiteral("explain:step_time")));
        emit summary->linkActivated(QStringLiteral("explain:step_time"));
        QApplication::processEvents();
        QVERIFY(window->explainDock()->isVisible());
        QCOMPARE(panel->currentPath(), std::string("step.time_s"));
        QCOMPARE(panel->valueText(), secs(evaluation->step.time));
        QVERIFY(!panel->formulaText().isEmpty());
        QVERIFY(panel->substitutedText().endsWith(QStringLiteral(" = ") + secs(evaluation->step.time)));
        QVERIFY(!panel->chapterText().isEmpty());
        QApplication::processEvents(); // the layout follows the new content before a grab, as on screen
        QVERIFY(window->explainDock()->grab().save(outDir() + QStringLiteral("/window-step-time.png")));
        // Drill into the first input with a derivation of its own, then Back.
        const auto links = panel->inputLinks();
        QVERIFY(!links.empty());
        emit panel->findChild<QLabel *>(QStringLiteral("explainInputs"))
            ->linkActivated(QStringLiteral("explain:") + QString::fromStdString(links.front()));
        QCOMPARE(panel->currentPath(), links.front());
        QVERIFY(!panel->isEmptyState());
        QApplication::processEvents(); // the layout follows the new content before a grab, as on screen
        QVERIFY(window->explainDock()->grab().save(outDir() + QStringLiteral("/window-drilled.png")));
        panel->back();
        QCOMPARE(panel->currentPath(), std::string("step.time_s"));

        // 2. A memory segment, clicked: the optimizer state, the third of the first bar (the
        // default plan's weights, sharded over 8192 chips, are thinner than a pixel).
        window->chartDocks().at(1)->raise();
        window->updateCharts(true);
        auto *memory = window->memoryChart();
        memory->replot(QCustomPlot::rpImmediateRefresh);
        const double below = memory->layerBytes(0, 0) + memory->layerBytes(0, 1);
        const double optimizer = memory->layerBytes(0, 2);
        QVERIFY(optimizer > 0);
        const QPoint at(static_cast<int>(memory->xAxis->coordToPixel(0)),
                        static_cast<int>(memory->yAxis->coordToPixel((below + optimizer / 2) / (1024.0 * 1024 * 1024))));
        QCOMPARE(memory->segmentAt(at), std::make_pair(0, 2));
        QSignalSpy clicked(memory, &views::MemoryChart::segmentClicked);
        QTest::mouseClick(memory, Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(panel->currentPath(), std::string("memory_per_chip.optimizer"));
        QCOMPARE(panel->valueText(), QString::fromStdString(model::formatBytes(evaluation->memory.optimizer, true)));
        QApplication::processEvents(); // the layout follows the new content before a grab, as on screen
        QVERIFY(window->explainDock()->grab().save(outDir() + QStringLiteral("/window-memory-optimizer.png")));

        // 3. A collective, picked on the roofline; its time is the result's.
        auto *roofline = window->rooflineChart();
        const auto &points = roofline->roofline().points;
        int collectivePoint = -1;
        int opPoint = -1;
        for (std::size_t i = 0; i < points.size(); ++i) {
            if (points[i].collective >= 0 && collectivePoint < 0)
                collectivePoint = static_cast<int>(i);
            if (points[i].collective < 0 && opPoint < 0)
                opPoint = static_cast<int>(i);
        }
        QVERIFY(collectivePoint >= 0 && opPoint >= 0);
        const int c = points[static_cast<std::size_t>(collectivePoint)].collective;
        emit roofline->pointSelected(collectivePoint);
        const std::string collectivePath = "collectives[" + std::to_string(c) + "].time_s";
        QCOMPARE(panel->currentPath(), collectivePath);
        QVERIFY(panel->titleText().startsWith(
            QString::fromStdString(evaluation->collectives[static_cast<std::size_t>(c)].purpose)));
        QCOMPARE(panel->valueText(), secs(evaluation->collectives[static_cast<std::size_t>(c)].timeS));
        QApplication::processEvents(); // the layout follows the new content before a grab, as on screen
        QVERIFY(window->explainDock()->grab().save(outDir() + QStringLiteral("/window-collective.png")));
        // An on-chip op's point maps to its entry of Evaluation::operations.
        emit roofline->pointSelected(opPoint);
        std::size_t op = 0;
        while (op < evaluation->operations.size() && evaluation->operations[op].op != points[static_cast<std::size_t>(opPoint)].op)
            ++op;
        QVERIFY(op < evaluation->operations.size());
        QCOMPARE(panel->currentPath(), "terms.operation_" + std::to_string(op) + "_time_s");
        if (!panel->isEmptyState()) // recorded once the model names operation terms
            QCOMPARE(panel->valueText(), secs(evaluation->operations[op].timeS));

        // 4. Timeline bars: the compute lane and a collective's exposed part.
        auto *timeline = window->timelineChart();
        const model::StepTimeline lanes = model::stepTimeline(window->document()->plan(), *evaluation);
        timeline->setTimeline(lanes);
        for (std::size_t i = 0; i < lanes.segments.size(); ++i) {
            const auto &segment = lanes.segments[i];
            if (segment.kind == "compute") {
                emit timeline->segmentSelected(static_cast<int>(i));
                QCOMPARE(panel->currentPath(), std::string("step.compute_s"));
                QCOMPARE(panel->valueText(), secs(evaluation->step.compute));
            } else if (segment.kind == "exposed" && segment.collective >= 0) {
                emit timeline->segmentSelected(static_cast<int>(i));
                QCOMPARE(panel->currentPath(), "collectives[" + std::to_string(segment.collective) + "].exposed_s");
            }
        }
    }

    void windowFollowsEdits()
    {
        auto window = showTestWindow(m_autosave.path());
        QVERIFY(window);
        window->explain("step.time_s", true);
        QApplication::processEvents();
        auto *panel = window->explainPanel();
        const QString before = panel->valueText();
        QCOMPARE(before, secs(window->document()->evaluation()->step.time));
        // Twice the batch: a longer step, shown as soon as the edit lands.
        QVERIFY(window->editField(QStringLiteral("Set global batch"), "/workload/global_batch", 2048));
        const double after = window->document()->evaluation()->step.time;
        QCOMPARE(panel->valueText(), secs(after));
        QVERIFY(panel->valueText() != before);
        // Undo brings the first number back.
        window->document()->undoStack()->undo();
        QCOMPARE(panel->valueText(), before);
    }

    void f1ShowsThePanelOnTheSelection()
    {
        auto window = showTestWindow(m_autosave.path());
        QVERIFY(window);
        window->explain("mfu");
        QVERIFY(!window->explainDock()->isVisible()); // picked, not yet shown
        auto *action = window->findChild<QAction *>(QStringLiteral("explainAction"));
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(Qt::Key_F1));
        QCursor::setPos(window->mapToGlobal(QPoint(5, 5))); // over nothing explainable
        action->trigger();
        QApplication::processEvents();
        QVERIFY(window->explainDock()->isVisible());
        QCOMPARE(window->explainPanel()->currentPath(), std::string("mfu"));
        QCOMPARE(window->explainPanel()->valueText(),
                 views::formatPathValue("mfu", window->document()->evaluation()->mfu).plain());
        // F1 over a memory segment explains that segment.
        window->chartDocks().at(1)->raise();
        window->updateCharts(true);
        auto *memory = window->memoryChart();
        memory->replot(QCustomPlot::rpImmediateRefresh);
        const double below = memory->layerBytes(0, 0) + memory->layerBytes(0, 1);
        const QPoint at(static_cast<int>(memory->xAxis->coordToPixel(0)),
                        static_cast<int>(memory->yAxis->coordToPixel((below + memory->layerBytes(0, 2) / 2) / (1024.0 * 1024 * 1024))));
        QCursor::setPos(memory->mapToGlobal(at));
        QCOMPARE(QCursor::pos(), memory->mapToGlobal(at));
        QTest::keyClick(window.get(), Qt::Key_F1);
        QCOMPARE(window->explainPanel()->currentPath(), std::string("memory_per_chip.optimizer"));
        // Dark: the panel follows the palette.
        window->setDarkTheme(true);
        QApplication::processEvents();
        QApplication::processEvents(); // the layout follows the new content before a grab, as on screen
        QVERIFY(window->explainDock()->grab().save(outDir() + QStringLiteral("/window-mfu-dark.png")));
        QVERIFY(window->grab().save(outDir() + QStringLiteral("/window-whole-dark.png")));
        window->setDarkTheme(false);
    }

    void servingDecodeStep()
    {
        auto window = showTestWindow(m_autosave.path());
        QVERIFY(window);
        QVERIFY(window->openFile(QStringLiteral(MESHPLAN_TEST_DATA "/plans/llama-3-70b-int8-v5e-serving.meshplan")));
        const auto &evaluation = window->document()->evaluation();
        QVERIFY(evaluation && evaluation->inference);
        QLabel *summary = summaryLabel(window->inspector());
        QVERIFY(summary && summary->text().contains(QStringLiteral("explain:decode_step")));
        emit summary->linkActivated(QStringLiteral("explain:decode_step"));
        QApplication::processEvents();
        auto *panel = window->explainPanel();
        QCOMPARE(panel->currentPath(), std::string("inference.decode_step_s"));
        QCOMPARE(panel->valueText(), secs(evaluation->inference->decodeStepS));
        QVERIFY(!panel->formulaText().isEmpty());
        QApplication::processEvents(); // the layout follows the new content before a grab, as on screen
        QVERIFY(window->explainDock()->grab().save(outDir() + QStringLiteral("/window-decode-step.png")));
    }
};

QTEST_MAIN(TestExplainPanel)
#include "tst_explainpanel.moc"
