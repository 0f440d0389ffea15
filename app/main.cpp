// meshplan: the desktop planner. `meshplan [FILE]` opens a plan (or the default plan);
// `meshplan --screenshot OUT.png [--size WxH] [--dark] [--compare BASELINE] [--search] [--scenario ID]
// [FILE]` renders the window offscreen and exits (--search: after a search of the plan, its best result
// previewed; --scenario: one of the book's worked examples with its teaching note).
// `meshplan --present DECK.meshdeck [--slide N] [--screenshot OUT.png [--size WxH]]` presents a deck.
#include "atomicwrite.h"
#include "deckfile.h"
#include "mainwindow.h"
#include "meshcanvas.h"
#include "presenterwindow.h"
#include "quitsignals.h"
#include "searchpanel.h"
#include "searchrunner.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>
#include <exception>
#include <cstring>

namespace {

bool wantsScreenshot(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0)
            return true;
    return false;
}

/// --help and --version only print: they must work over ssh with no display too.
bool onlyPrints(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        for (const char *flag : {"--help", "-h", "-?", "--help-all", "--version", "-v"})
            if (std::strcmp(argv[i], flag) == 0)
                return true;
    return false;
}

int fail(const QString &message)
{
    std::fprintf(stderr, "meshplan: %s\n", qPrintable(message));
    return 2;
}

/// `meshplan --present DECK [--slide N]`: presenter mode until Esc; with `shot`, that slide
/// rendered offscreen at `size` into `shot` instead.
int present(const QString &deckPath, const QString &slide, const QString &shot, QSize size, bool hasFile)
{
    if (hasFile)
        return fail(QStringLiteral("--present: give the deck only, not a plan as well"));
    auto deck = meshplan::app::loadDeck(deckPath);
    if (!deck)
        return fail(QStringLiteral("--present: %1").arg(QString::fromStdString(deck.error().toString())));
    const int count = static_cast<int>(deck->slides.size());
    int index = 0;
    if (!slide.isEmpty()) {
        bool ok = false;
        const int n = slide.toInt(&ok);
        if (!ok || n < 1 || n > count)
            return fail(QStringLiteral("--slide: expected a slide from 1 to %1, got \"%2\"").arg(count).arg(slide));
        index = n - 1;
    }
    meshplan::app::PresenterWindow presenter(std::move(*deck));
    presenter.showSlide(index);
    if (shot.isEmpty()) {
        presenter.showFullScreen();
        if (QGuiApplication::screens().size() > 1)
            presenter.showSpeakerWindow();
        return QApplication::exec();
    }
    presenter.resize(size);
    presenter.show();
    QApplication::processEvents();
    presenter.canvas()->fitMesh();
    QApplication::processEvents();
    if (auto error = meshplan::views::writePngAtomically(shot, presenter.grab().toImage()))
        return fail(QStringLiteral("--screenshot: %1").arg(*error));
    std::printf("%s\n", qPrintable(shot));
    return 0;
}

int run(int argc, char **argv)
{
    // A screenshot needs no display: choose the offscreen platform before Qt picks one.
    const bool screenshot = wantsScreenshot(argc, argv);
    if ((screenshot || onlyPrints(argc, argv)) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    if (screenshot || onlyPrints(argc, argv)) {
        // Qt's notes about the offscreen platform are noise in a script's output.
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &, const QString &message) {
            if (type == QtCriticalMsg || type == QtFatalMsg)
                std::fprintf(stderr, "%s\n", qPrintable(message));
        });
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Meshplan"));
    QApplication::setApplicationName(QStringLiteral("Meshplan"));
    QApplication::setApplicationVersion(QStringLiteral(MESHPLAN_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Plan how a language model is scaled across an accelerator mesh."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("A .meshplan plan to open (default: the built-in plan)."),
                                 QStringLiteral("[FILE]"));
    QCommandLineOption shotOption(QStringLiteral("screenshot"),
                                  QStringLiteral("Render the window offscreen to this PNG and exit."), QStringLiteral("OUT.png"));
    QCommandLineOption sizeOption(QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1600x1000; 1920x1080 with --present)."),
                                  QStringLiteral("WxH"), QStringLiteral("1600x1000"));
    QCommandLineOption darkOption(QStringLiteral("dark"), QStringLiteral("Start with the dark theme."));
    QCommandLineOption compareOption(QStringLiteral("compare"),
                                     QStringLiteral("Pin this plan as the baseline and show the Compare tab."),
                                     QStringLiteral("BASELINE.meshplan"));
    parser.addOption(shotOption);
    parser.addOption(sizeOption);
    parser.addOption(darkOption);
    parser.addOption(compareOption);
    QCommandLineOption searchOption(QStringLiteral("search"),
                                    QStringLiteral("With --screenshot: search the plan's parallelizations and "
                                                   "preview the best result in the search panel."));
    parser.addOption(searchOption);
    QCommandLineOption presentOption(QStringLiteral("present"),
                                     QStringLiteral("Present this deck full screen (with --screenshot: render a slide)."),
                                     QStringLiteral("DECK.meshdeck"));
    QCommandLineOption slideOption(QStringLiteral("slide"), QStringLiteral("With --present: start at slide N (from 1)."),
                                   QStringLiteral("N"));
    parser.addOption(presentOption);
    parser.addOption(slideOption);
    QCommandLineOption scenarioOption(QStringLiteral("scenario"),
                                      QStringLiteral("Open one of the book's worked examples (meshplan-cli scenarios) "
                                                     "as a new plan, with its teaching note."),
                                      QStringLiteral("ID"));
    parser.addOption(scenarioOption);
    parser.process(app);

    const QStringList files = parser.positionalArguments();
    if (files.size() > 1)
        return fail(QStringLiteral("one plan file at a time (got %1)").arg(files.size()));

    QSize size(1600, 1000);
    if (parser.isSet(sizeOption)) {
        const QStringList parts = parser.value(sizeOption).split(QLatin1Char('x'));
        bool okW = false;
        bool okH = false;
        const int w = parts.size() == 2 ? parts[0].toInt(&okW) : 0;
        const int h = parts.size() == 2 ? parts[1].toInt(&okH) : 0;
        if (!okW || !okH || w < 320 || h < 240 || w > 8000 || h > 8000)
            return fail(QStringLiteral("--size: expected WxH between 320x240 and 8000x8000, got \"%1\"")
                            .arg(parser.value(sizeOption)));
        size = QSize(w, h);
    }

    if (parser.isSet(presentOption))
        return present(parser.value(presentOption), parser.isSet(slideOption) ? parser.value(slideOption) : QString(),
                       screenshot ? parser.value(shotOption) : QString(),
                       parser.isSet(sizeOption) ? size : QSize(1920, 1080), !files.isEmpty());
    if (parser.isSet(slideOption))
        return fail(QStringLiteral("--slide: only with --present DECK"));

    // A screenshot run keeps its recovery files to itself and leaves the recent-files list alone.
    QTemporaryDir scratch;
    meshplan::app::MainWindow window(nullptr, screenshot ? scratch.path() : QString());
    if (parser.isSet(darkOption))
        window.setDarkTheme(true);
    if (screenshot) {
        window.setInteractive(false);
        window.setRecordsRecentFiles(false);
        if (!files.isEmpty() && !window.openFile(files.front()))
            return fail(window.lastError());
        if (parser.isSet(scenarioOption) && !window.openScenario(parser.value(scenarioOption)))
            return fail(QStringLiteral("--scenario: %1").arg(window.lastError()));
        if (parser.isSet(compareOption) && !window.pinBaselineFile(parser.value(compareOption)))
            return fail(QStringLiteral("--compare: %1").arg(window.lastError()));
        window.resize(size);
        window.show();
        QApplication::processEvents();
        if (parser.isSet(searchOption)) {
            window.showSearch();
            window.startSearch(window.searchPanel()->options());
            auto *runner = window.searchRunner();
            QEventLoop wait;
            QObject::connect(runner, &meshplan::app::SearchRunner::finished, &wait, &QEventLoop::quit);
            QObject::connect(runner, &meshplan::app::SearchRunner::failed, &wait, &QEventLoop::quit);
            QTimer::singleShot(120000, runner, &meshplan::app::SearchRunner::cancel); // a picture of what two minutes found
            if (runner->isRunning())
                wait.exec();
            if (window.searchPanel()->candidateCount() > 0)
                window.searchPanel()->pickCandidate(0);
            QApplication::processEvents();
        }
        window.canvas()->fitMesh();
        window.updateCharts(false);
        QApplication::processEvents();
        const QString out = parser.value(shotOption);
        // Into memory, then atomically: a full disk must not destroy the picture already there.
        if (auto error = meshplan::views::writePngAtomically(out, window.grab().toImage()))
            return fail(QStringLiteral("--screenshot: %1").arg(*error));
        std::printf("%s\n", qPrintable(out));
        return 0;
    }

    // A kill or Ctrl+C: unsaved work stays as a recovery copy, and the lock goes with the session.
    meshplan::app::QuitSignals quitSignals;
    QObject::connect(&quitSignals, &meshplan::app::QuitSignals::received, &window,
                     &meshplan::app::MainWindow::quitForSignal);

    window.show();
    if (!files.isEmpty())
        window.openFile(files.front());
    if (parser.isSet(scenarioOption))
        window.openScenario(parser.value(scenarioOption));
    if (parser.isSet(compareOption))
        window.pinBaselineFile(parser.value(compareOption));
    // After a crash the unsaved work is offered whichever file the user opens Meshplan with.
    QTimer::singleShot(0, &window, &meshplan::app::MainWindow::offerRecovery);
    return app.exec();
}

} // namespace

int main(int argc, char **argv)
{
    // No exception may end the program with an abort: say what happened and exit.
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "meshplan: internal error: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "meshplan: internal error\n");
    }
    return 1;
}
