#pragma once
// What every chart shares: colours from the application palette (light or dark), log axes that
// never receive a non-positive value, and export to PNG, PDF and SVG.

#include <QColor>
#include <QPalette>
#include <QString>

#include <optional>

class QCPAxis;
class QCustomPlot;

namespace meshplan::views {

/// Applies `palette` to the plot's background, axes, grid, legend and text.
void applyChartStyle(QCustomPlot *plot, const QPalette &palette);
/// Whether `palette` is a dark one (QStyleHints::colorScheme arrived only in Qt 6.5).
bool isDark(const QPalette &palette);
/// Meshplan's dark palette, over `base` (the style's standard palette): the window's View > Dark
/// theme and `meshplan-cli render --dark` share it.
QPalette darkPalette(QPalette base);
/// A series colour that stands out on `palette`'s background: as given on light palettes, lifted
/// towards white on dark ones where it is too dark to read (the Okabe-Ito blue on #1e1f22).
QColor seriesColor(const QColor &color, const QPalette &palette);
/// Moves the plot's legend out of the axis rect into a narrow column on its right, at the top.
void putLegendBeside(QCustomPlot *plot);
/// How a log axis labels its ticks: powers of ten (FLOPs/s, intensity), times with their unit
/// ("20 s", "50 ms") or counts with a k/M suffix ("8k", "1.5M").
enum class LogLabels {
    PowersOfTen,
    Seconds,
    Counts,
};
/// Makes `axis` logarithmic with power-of-ten labels.
void setLogAxis(QCPAxis *axis, LogLabels labels = LogLabels::PowersOfTen);
/// A tick label as LogLabels asks: "20 s", "50 ms", "8k", "1.5M" (PowersOfTen: empty, the
/// axis's own number format draws it).
QString logTickLabel(double value, LogLabels labels);
/// True for values a log axis can show: finite and positive (QCustomPlot draws garbage otherwise).
bool loggable(double value);
/// Sets a log axis to [lo, hi] widened by `pad` decades; clamps to QCustomPlot's valid range.
void setLogRange(QCPAxis *axis, double lo, double hi, double pad = 0.15);

/// Clears `plot` (its plottables and items) and shows `message` alone in the middle, without
/// axes or legend: empty axes around a sentence read as "the value is zero".
void showChartMessage(QCustomPlot *plot, const QString &message);
/// Shows the axes and the legend again after showChartMessage.
void showChartAxes(QCustomPlot *plot);

/// Writes `plot` to `path` as PNG, PDF or SVG (by extension), laid out at `width` x `height`
/// and drawn `scale` times larger (text, pens and markers with it): a PNG is then width x scale
/// by height x scale pixels, an SVG that size with the layout as its view box, a PDF a page of
/// width x height points. A message naming the file on failure.
/// A non-empty `title` (the plan's name, its chips) is drawn above the chart in the file only,
/// so a chart pasted into a slide still says what it shows.
std::optional<QString> exportChart(QCustomPlot *plot, const QString &path, int width, int height, double scale = 1.0,
                                   const QString &title = QString());

/// The scale at which a chart exported at `size` keeps the proportions of text to plot that it
/// has at its design size of 1200x750: 1 up to that size, then growing with the smaller ratio,
/// so a 1920x1080 slide gets text 1.44 times larger rather than the same pixels on a bigger page.
double presentationScale(QSize size);

} // namespace meshplan::views
