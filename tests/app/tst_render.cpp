// meshplan-cli render: every chart of three kinds of plan (TPU training, GPU MoE training,
// serving) written headless, as PNG, PDF and SVG; bad input refused with exit code 2.
#include "fulldisk.h"

#include <QDir>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

namespace {

struct Run {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

/// Runs the CLI with no display and no platform chosen, as a CI job or a script would.
Run cli(const QStringList &args)
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(MESHPLAN_CLI_PATH), args);
    if (!process.waitForFinished(60000))
        return {};
    return {process.exitCode(), process.readAllStandardOutput(), process.readAllStandardError()};
}

QString plan(const char *name)
{
    return QStringLiteral(MESHPLAN_TEST_DATA "/plans/") + QLatin1String(name) + QStringLiteral(".meshplan");
}

} // namespace

class TestRender : public QObject
{
    Q_OBJECT

private slots:
    void everyChartOfThreePlans_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("chart");
        for (const char *p : {"llama-3-70b-v5p-16x16x32", "mixtral-8x7b-h100-moe", "llama-3-70b-int8-v5e-serving"})
            for (const char *c : {"roofline", "memory", "timeline", "sweep", "sweep-chips"})
                if (!(QLatin1String(c) == QLatin1String("sweep-chips") && QLatin1String(p).endsWith(QLatin1String("serving"))))
                    QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(p), QLatin1String(c))))
                        << plan(p) << QString::fromLatin1(c);
    }

    void everyChartOfThreePlans()
    {
        QFETCH(QString, plan);
        QFETCH(QString, chart);
        QTemporaryDir dir;
        // MESHPLAN_SCREENSHOTS=dir keeps the images for a person to look at.
        const QString keep = qEnvironmentVariable("MESHPLAN_SCREENSHOTS");
        const QString out = (keep.isEmpty() ? dir.path() : keep) + QLatin1Char('/')
                            + QFileInfo(plan).baseName() + QLatin1Char('-') + chart + QStringLiteral(".png");
        const Run run = cli({QStringLiteral("render"), plan, QStringLiteral("--chart"), chart, QStringLiteral("-o"), out,
                             QStringLiteral("--size"), QStringLiteral("1000x620")});
        QVERIFY2(run.code == 0, run.err.constData());
        const QImage image(out);
        QCOMPARE(image.size(), QSize(1000, 620));
        // Not blank: a chart has axes, text and colour.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 5)
            for (int x = 0; x < image.width(); x += 5)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 12, qPrintable(QString::number(colours.size())));
        // And data, not a sentence: text, axes and grid are grey, the data is in colour. A chart
        // showing only a message (this test's blind spot before) has no coloured pixel at all.
        int coloured = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x) {
                const QColor c = image.pixelColor(x, y);
                coloured += std::max({c.red(), c.green(), c.blue()}) - std::min({c.red(), c.green(), c.blue()}) > 60;
            }
        QVERIFY2(coloured > 1000, qPrintable(QString::number(coloured)));
    }

    // A 1920x1080 slide is laid out at 1333x750 and drawn 1.44 times larger, so its text is as
    // large a share of the picture as at 1200x750; --dark draws on the dark palette's base.
    void presentationSizeAndDark()
    {
        QTemporaryDir dir;
        const QString light = dir.filePath(QStringLiteral("light.png"));
        const QString dark = dir.filePath(QStringLiteral("dark.png"));
        for (const QString &out : {light, dark}) {
            QStringList args{QStringLiteral("render"), plan("mixtral-8x7b-h100-moe"), QStringLiteral("--chart"),
                             QStringLiteral("memory"), QStringLiteral("-o"), out, QStringLiteral("--size"),
                             QStringLiteral("1920x1080")};
            if (out == dark)
                args << QStringLiteral("--dark") << QStringLiteral("--no-title");
            const Run run = cli(args);
            QVERIFY2(run.code == 0, run.err.constData());
            QCOMPARE(QImage(out).size(), QSize(1920, 1080));
        }
        // The corner is the chart's background: white-ish in light, the dark base in dark.
        QVERIFY(QColor(QImage(light).pixel(3, 3)).lightness() > 200);
        QVERIFY(QColor(QImage(dark).pixel(3, 3)).lightness() < 60);
    }

    void pdfAndSvg()
    {
        QTemporaryDir dir;
        for (const char *ext : {"pdf", "svg"}) {
            const QString out = dir.filePath(QStringLiteral("roofline.") + QLatin1String(ext));
            const Run run = cli({QStringLiteral("render"), plan("llama-3-405b-h100-16k"), QStringLiteral("--chart"),
                                 QStringLiteral("roofline"), QStringLiteral("-o"), out});
            QVERIFY2(run.code == 0, run.err.constData());
            QFile file(out);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray head = file.read(200);
            QVERIFY(QLatin1String(ext) == QLatin1String("pdf") ? head.startsWith("%PDF") : head.contains("<svg"));
        }
    }

    void fullDiskKeepsTheOldFile_data()
    {
        QTest::addColumn<QString>("suffix");
        QTest::newRow("png") << QStringLiteral("png");
        QTest::newRow("pdf") << QStringLiteral("pdf");
        QTest::newRow("svg") << QStringLiteral("svg");
    }

    // Issue 15.3: on a full disk render exited 0 with a truncated SVG or PDF, and a PNG destroyed
    // the file it overwrote. Now: exit non-zero, the old file byte-identical.
    void fullDiskKeepsTheOldFile()
    {
        QFETCH(QString, suffix);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("chart.") + suffix);
        const QByteArray old("the chart from yesterday\n");
        {
            QFile file(out);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(old);
        }
        Run run;
        {
            const meshplan::testing::FullDisk full(4096); // every chart is larger
            QVERIFY(full.isActive());
            run = cli({QStringLiteral("render"), plan("llama-3-70b-v5p-16x16x32"), QStringLiteral("--chart"),
                       QStringLiteral("roofline"), QStringLiteral("-o"), out});
        }
        QVERIFY2(run.code != 0, run.err.constData());
        QVERIFY2(run.err.contains("unchanged"), run.err.constData());
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), old);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1); // no temporary left
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString p = plan("mixtral-8x7b-h100-moe");
        QTest::newRow("no chart") << QStringList{QStringLiteral("render"), p, QStringLiteral("-o"), QStringLiteral("x.png")}
                                  << QStringLiteral("--chart");
        QTest::newRow("unknown chart") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("pie"),
                                                      QStringLiteral("-o"), QStringLiteral("x.png")}
                                       << QStringLiteral("--chart: expected roofline");
        QTest::newRow("no output") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("memory")}
                                   << QStringLiteral("-o");
        QTest::newRow("bad format") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("memory"),
                                                   QStringLiteral("-o"), QStringLiteral("x.gif")}
                                    << QStringLiteral("-o: expected a .png");
        QTest::newRow("bad size") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("memory"),
                                                 QStringLiteral("-o"), QStringLiteral("x.png"), QStringLiteral("--size"),
                                                 QStringLiteral("0x-5")}
                                  << QStringLiteral("--size");
        QTest::newRow("missing plan") << QStringList{QStringLiteral("render"), QStringLiteral("/nonexistent.meshplan"),
                                                     QStringLiteral("--chart"), QStringLiteral("memory"), QStringLiteral("-o"),
                                                     QStringLiteral("x.png")}
                                      << QStringLiteral("/nonexistent.meshplan");
        QTest::newRow("signed size") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("memory"),
                                                    QStringLiteral("-o"), QStringLiteral("x.png"), QStringLiteral("--size"),
                                                    QStringLiteral("+1200x+750")}
                                     << QStringLiteral("--size: expected WxH");
        QTest::newRow("chart twice") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("memory"),
                                                    QStringLiteral("--chart"), QStringLiteral("sweep"), QStringLiteral("-o"),
                                                    QStringLiteral("x.png")}
                                     << QStringLiteral("--chart: given twice");
        QTest::newRow("no file name") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("memory"),
                                                     QStringLiteral("-o"), QStringLiteral(".png")}
                                      << QStringLiteral("-o: needs a file name");
        QTest::newRow("serving by chips") << QStringList{QStringLiteral("render"), plan("llama-3-70b-int8-v5e-serving"),
                                                         QStringLiteral("--chart"), QStringLiteral("sweep-chips"),
                                                         QStringLiteral("-o"), QStringLiteral("x.png")}
                                          << QStringLiteral("use --chart sweep");
        QTest::newRow("unwritable") << QStringList{QStringLiteral("render"), p, QStringLiteral("--chart"), QStringLiteral("memory"),
                                                   QStringLiteral("-o"), QStringLiteral("/nonexistent-dir/x.png")}
                                    << QStringLiteral("cannot be written (No such file or directory)");
    }

    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run run = cli(args);
        QCOMPARE(run.code, 2);
        QVERIFY2(QString::fromUtf8(run.err).contains(message), run.err.constData());
        QCOMPARE(run.err.count('\n'), 1); // one line
    }
};

QTEST_GUILESS_MAIN(TestRender)
#include "tst_render.moc"
