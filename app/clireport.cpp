// meshplan-cli report: a plan's report written to a PDF or HTML file, without a window.
#include "cli.h"
#include "deckfile.h"
#include "planreport.h"

#include <QFileInfo>

#include <ostream>

namespace meshplan::app {

int runReport(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    const auto fail = [&](const std::string &message) {
        err << "meshplan-cli: " << message << "\n";
        return 2;
    };
    std::string file;
    std::string output;
    bool dark = false;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a == "-o" || a == "--output") {
            if (!output.empty())
                return fail(a + ": given twice");
            if (i + 1 >= args.size())
                return fail(a + ": needs a file name (.pdf or .html)");
            output = args[++i];
        } else if (a == "--dark") {
            dark = true;
        } else if (!a.empty() && a[0] == '-') {
            return fail(a + ": unknown option for report (use -o and --dark)");
        } else if (file.empty()) {
            file = a;
        } else {
            return fail("report takes one plan file, got \"" + file + "\" and \"" + a + "\"");
        }
    }
    if (file.empty())
        return fail("report: needs a plan or deck file (report PLAN -o report.pdf)");
    if (output.empty())
        return fail("-o: missing (the file to write: .pdf or .html)");
    const QString suffix = QFileInfo(QString::fromStdString(output)).suffix().toLower();
    if (suffix != QLatin1String("pdf") && suffix != QLatin1String("html"))
        return fail("-o: expected a .pdf or .html file, got \"" + output + "\"");
    std::vector<ReportSection> sections;
    if (isDeckFile(QString::fromStdString(file))) {
        // A deck: one section per slide, a slide whose plan cannot be read marked as such.
        const auto deck = loadDeck(QString::fromStdString(file));
        if (!deck)
            return fail(deck.error().message);
        for (const model::DeckSlide &slide : deck->slides)
            sections.push_back({slide.plan, QString::fromStdString(slide.title), QString::fromStdString(slide.notes),
                                QString::fromStdString(slide.problem)});
        if (sections.empty())
            return fail(file + ": the deck has no slides");
    } else {
        const auto plan = loadPlan(file);
        if (!plan) {
            const auto &e = plan.error();
            return fail(file + ": " + (e.path.empty() ? "" : e.path + ": ") + e.message);
        }
        sections.push_back({*plan, {}, {}, {}});
    }
    if (auto error = writeReport(sections, QString::fromStdString(output), dark))
        return fail(error->toStdString());
    out << output << "\n";
    return 0;
}

} // namespace meshplan::app
