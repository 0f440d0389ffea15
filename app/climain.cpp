// meshplan-cli: the model's calculators on the command line.
#include "cli.h"

#include <QApplication>
#include <QFont>

#include <exception>
#include <iostream>

namespace {

int run(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 1 && args.front() == "--version") {
        std::cout << "meshplan-cli " MESHPLAN_VERSION "\n";
        return 0;
    }
    if (!args.empty() && (args.front() == "render" || args.front() == "report")) {
        // Charts need a GUI application but never a display: pick the offscreen platform.
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        // Qt's own chatter (no runtime dir, offscreen plugin notes) is not ours to report: errors
        // are one line from runRender.
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &, const QString &message) {
            if (type == QtFatalMsg)
                std::cerr << message.toStdString() << "\n";
        });
        int qtArgc = 1;
        QApplication app(qtArgc, argv);
        // A named family (installed with fonts-dejavu-core) rather than fontconfig's alias "Sans
        // Serif", which an SVG names as is and browsers then draw in a serif face.
        QFont font(QStringLiteral("DejaVu Sans"));
        font.setPointSizeF(QApplication::font().pointSizeF());
        QApplication::setFont(font);
        if (args.front() == "report")
            return meshplan::app::runReport(args, std::cout, std::cerr);
        return meshplan::app::runRender(args, std::cout, std::cerr);
    }
    return meshplan::app::runCli(args, std::cout, std::cerr);
}

} // namespace

int main(int argc, char **argv)
{
    // Nothing a user feeds the CLI may end it with an uncaught exception (an abort and a core).
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        std::cerr << "meshplan-cli: internal error: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "meshplan-cli: internal error\n";
    }
    return 1;
}
