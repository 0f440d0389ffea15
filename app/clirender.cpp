// meshplan-cli render: a chart of a plan written to a file, without a window.
#include "chartfeed.h"
#include "cli.h"

#include <QFileInfo>

#include <algorithm>
#include <ostream>

namespace meshplan::app {

namespace {

int fail(std::ostream &err, const std::string &message)
{
    err << "meshplan-cli: " << message << "\n";
    return 2;
}

bool knownChart(const std::string &name)
{
    for (const char *chart : kChartNames)
        if (name == chart)
            return true;
    return false;
}

} // namespace

int runRender(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string file;
    std::string chart;
    std::string output;
    std::string size = "1200x750";
    bool sizeGiven = false;
    bool dark = false;
    bool titled = true;
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        const auto value = [&](std::string &into) {
            if (i + 1 >= args.size())
                return false;
            into = args[++i];
            return true;
        };
        if ((a == "--chart" && !chart.empty()) || ((a == "-o" || a == "--output") && !output.empty())
            || (a == "--size" && sizeGiven))
            return fail(err, a + ": given twice");
        if (a == "--chart") {
            if (!value(chart))
                return fail(err, "--chart: needs a value (roofline, memory, timeline, sweep or sweep-chips)");
        } else if (a == "-o" || a == "--output") {
            if (!value(output))
                return fail(err, a + ": needs a file name");
        } else if (a == "--dark") {
            dark = true;
        } else if (a == "--no-title") {
            titled = false;
        } else if (a == "--size") {
            if (!value(size))
                return fail(err, "--size: needs WxH");
            sizeGiven = true;
        } else if (!a.empty() && a[0] == '-') {
            return fail(err, a + ": unknown option for render (use --chart, -o, --size, --dark, --no-title)");
        } else if (file.empty()) {
            file = a;
        } else {
            return fail(err, "render takes one plan file, got \"" + file + "\" and \"" + a + "\"");
        }
    }
    if (file.empty())
        return fail(err, "render: needs a plan file (render PLAN --chart roofline -o out.png)");
    if (chart.empty())
        return fail(err, "--chart: missing (roofline, memory, timeline, sweep or sweep-chips)");
    if (!knownChart(chart))
        return fail(err, "--chart: expected roofline, memory, timeline, sweep or sweep-chips, got \"" + chart + "\"");
    if (output.empty())
        return fail(err, "-o: missing (the file to write: .png, .pdf or .svg)");
    const QString suffix = QFileInfo(QString::fromStdString(output)).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("pdf") && suffix != QLatin1String("svg"))
        return fail(err, "-o: expected a .png, .pdf or .svg file, got \"" + output + "\"");
    if (QFileInfo(QString::fromStdString(output)).completeBaseName().isEmpty())
        return fail(err, "-o: needs a file name before the extension, got \"" + output + "\"");
    int w = 0;
    int h = 0;
    {
        // Digits only on both sides: "+1200x 750" is a typo, not a size.
        const auto digits = [](const std::string &t) {
            return !t.empty() && t.size() <= 6 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
        };
        const auto x = size.find('x');
        if (x != std::string::npos && digits(size.substr(0, x)) && digits(size.substr(x + 1))) {
            w = std::stoi(size.substr(0, x));
            h = std::stoi(size.substr(x + 1));
        }
        if (w < 200 || h < 150 || w > 10000 || h > 10000)
            return fail(err, "--size: expected WxH between 200x150 and 10000x10000, got \"" + size + "\"");
    }
    const auto plan = loadPlan(file);
    if (!plan) {
        const auto &e = plan.error();
        return fail(err, file + ": " + (e.path.empty() ? "" : e.path + ": ") + e.message);
    }
    if (auto error = renderChart(*plan, chart, QString::fromStdString(output), QSize(w, h), dark, titled))
        return fail(err, error->toStdString());
    out << output << "\n";
    return 0;
}

} // namespace meshplan::app
