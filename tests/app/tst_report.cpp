// meshplan-cli report: self-contained HTML and PDF reports of a plan, written atomically.
#include "fulldisk.h"
#include "testplans.h"

#include "base/units.h"
#include "cost/evaluation.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

namespace m = meshplan::model;

namespace {

const QString kData = QStringLiteral(MESHPLAN_TEST_DATA);

struct Run {
    int code = -1;
    QString out;
    QString err;
};

Run cli(const QStringList &args)
{
    QProcess p;
    p.start(QStringLiteral(MESHPLAN_CLI_PATH), args);
    p.waitForFinished(120000);
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

m::Evaluation evaluateFile(const QString &path)
{
    return m::evaluate(meshplan::testing::loadPlan(path)).value();
}

} // namespace

class TestReport : public QObject
{
    Q_OBJECT

private slots:
    void htmlIsSelfContained();
    void servingReportHasItsNumbers();
    void pdfHasTextAndChartPages();
    void darkReport();
    void deckReportHasASectionPerSlide();
    void fullDiskLeavesTheOldReport();
    void badArguments();

private:
    QTemporaryDir m_dir;
};

void TestReport::htmlIsSelfContained()
{
    const QString plan = kData + QStringLiteral("/plans/llama-3-70b-v5p-16x16x32.meshplan");
    const QString out = m_dir.filePath(QStringLiteral("r.html"));
    const Run r = cli({QStringLiteral("report"), plan, QStringLiteral("-o"), out});
    QCOMPARE(r.code, 0);
    const QString html = QString::fromUtf8(readAll(out));
    // Every chart of a training plan (roofline, memory, timeline, both sweeps), embedded.
    QCOMPARE(html.count(QStringLiteral("src='data:image/png;base64,")), 5);
    // Nothing loads from outside: no remote image, script, stylesheet or font.
    QVERIFY(!html.contains(QRegularExpression(QStringLiteral("src=['\"]?https?:"))));
    QVERIFY(!html.contains(QStringLiteral("<script")));
    QVERIFY(!html.contains(QStringLiteral("<link")));
    QVERIFY(!html.contains(QStringLiteral("@import")));
    // The headline numbers as the model gives them, with their derivations and the book's chapter.
    const m::Evaluation e = evaluateFile(plan);
    QVERIFY(html.contains(QString::fromStdString(m::formatSeconds(e.step.time))));
    QVERIFY(html.contains(QStringLiteral("(step.time_s)")));
    QVERIFY(html.contains(QStringLiteral("compute_s + bubble_s + exposed_communication_s + optimizer_s")));
    QVERIFY(html.contains(QStringLiteral("https://jax-ml.github.io/scaling-book/training/")));
    QVERIFY(html.contains(QStringLiteral("LLaMA-3 70B")));
    QVERIFY(html.contains(QStringLiteral("Warnings")));
    // Each headline in its unit, read from its whole path: memory in bytes as the memory chart
    // shows it, tokens per second a rate, not a time (the report once said "39.6 days").
    QVERIFY2(html.contains(QStringLiteral("<b>Memory per chip = %1</b>")
                               .arg(QString::fromStdString(m::formatBytes(e.memory.total, true)))),
             qPrintable(html));
    QVERIFY(html.contains(QRegularExpression(QStringLiteral("<b>Tokens per second = [0-9.e+]+</b>"))));
}

void TestReport::servingReportHasItsNumbers()
{
    const QString plan = kData + QStringLiteral("/plans/llama-3-70b-int8-v5e-serving.meshplan");
    const QString out = m_dir.filePath(QStringLiteral("s.html"));
    QCOMPARE(cli({QStringLiteral("report"), plan, QStringLiteral("-o"), out}).code, 0);
    const QString html = QString::fromUtf8(readAll(out));
    // A serving plan has no chip-count sweep: four charts.
    QCOMPARE(html.count(QStringLiteral("src='data:image/png;base64,")), 4);
    const m::Evaluation e = evaluateFile(plan);
    QVERIFY(html.contains(QStringLiteral("(inference.decode_step_s)")));
    QVERIFY(html.contains(QString::fromStdString(m::formatSeconds(e.inference->decodeStepS))));
    QVERIFY(html.contains(QStringLiteral("https://jax-ml.github.io/scaling-book/inference/")));
}

void TestReport::pdfHasTextAndChartPages()
{
    const QString out = m_dir.filePath(QStringLiteral("r.pdf"));
    const Run r = cli({QStringLiteral("report"), kData + QStringLiteral("/plans/llama-3-70b-v5p-16x16x32.meshplan"),
                       QStringLiteral("-o"), out});
    QCOMPARE(r.code, 0);
    const QByteArray pdf = readAll(out);
    QVERIFY(pdf.startsWith("%PDF-"));
    QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    // The title and the section's text (at least a page), then five charts two to a page.
    const int pages = int(QString::fromLatin1(pdf).count(QRegularExpression(QStringLiteral("/Type\\s*/Page(?!s)"))));
    QVERIFY2(pages >= 4, qPrintable(QString::number(pages)));
}

void TestReport::darkReport()
{
    const QString out = m_dir.filePath(QStringLiteral("d.html"));
    QCOMPARE(cli({QStringLiteral("report"), kData + QStringLiteral("/plans/mixtral-8x7b-h100-moe.meshplan"),
                  QStringLiteral("--dark"), QStringLiteral("-o"), out})
                 .code,
             0);
    const QString html = QString::fromUtf8(readAll(out));
    QVERIFY(html.contains(QStringLiteral("background:#1e1f22")));
    QVERIFY(html.contains(QStringLiteral("Experts")));
}

void TestReport::deckReportHasASectionPerSlide()
{
    const QString out = m_dir.filePath(QStringLiteral("deck.html"));
    const Run r = cli({QStringLiteral("report"), kData + QStringLiteral("/decks/review.meshdeck"), QStringLiteral("-o"), out});
    QCOMPARE(r.code, 0);
    const QString html = QString::fromUtf8(readAll(out));
    QCOMPARE(html.count(QStringLiteral("<h2>")), 4);
    QVERIFY(html.contains(QStringLiteral("<h2>Training LLaMA-3 70B on a v5p pod</h2>")));
    QVERIFY(html.contains(QStringLiteral("FSDP over the whole pod"))); // the speaker notes
    // The two good slides' charts (training five, serving four); the bad ones marked with why.
    QCOMPARE(html.count(QStringLiteral("src='data:image/png;base64,")), 9);
    QVERIFY(html.contains(QStringLiteral("../plans/no-such-plan.meshplan: does not exist")));
    QVERIFY(html.contains(QStringLiteral("slides[3].plan.parallelism.tensor")));
}

void TestReport::fullDiskLeavesTheOldReport()
{
    const QString out = m_dir.filePath(QStringLiteral("kept.html"));
    {
        QFile f(out);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("the old report\n");
    }
    Run r;
    {
        meshplan::testing::FullDisk disk(4096); // a report is hundreds of kB
        QVERIFY(disk.isActive());
        r = cli({QStringLiteral("report"), kData + QStringLiteral("/plans/llama-3-70b-v5p-16x16x32.meshplan"),
                 QStringLiteral("-o"), out});
    }
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(out), qPrintable(r.err));
    QCOMPARE(readAll(out), QByteArray("the old report\n"));
}

void TestReport::badArguments()
{
    const QString plan = kData + QStringLiteral("/plans/llama-3-70b-v5p-16x16x32.meshplan");
    Run r = cli({QStringLiteral("report"), plan, QStringLiteral("-o"), m_dir.filePath(QStringLiteral("x.docx"))});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains(QStringLiteral(".pdf or .html")));
    r = cli({QStringLiteral("report"), plan});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains(QStringLiteral("-o: missing")));
    r = cli({QStringLiteral("report"), kData + QStringLiteral("/plans/no-such.meshplan"), QStringLiteral("-o"),
             m_dir.filePath(QStringLiteral("y.pdf"))});
    QCOMPARE(r.code, 2);
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("y.pdf"))));
}

QTEST_GUILESS_MAIN(TestReport)
#include "tst_report.moc"
