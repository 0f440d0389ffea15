#include "chartpanel.h"

#include "chartstyle.h"

#include <qcustomplot.h>

#include <QClipboard>
#include <QFileDialog>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QToolButton>
#include <QVBoxLayout>

namespace meshplan::views {

ChartPanel::ChartPanel(QCustomPlot *chart, const QString &name, QWidget *parent)
    : QWidget(parent)
    , m_chart(chart)
    , m_name(name)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    m_bar = new QHBoxLayout;
    m_bar->addStretch(1);
    auto *resetButton = new QToolButton(this);
    resetButton->setText(tr("Reset view"));
    resetButton->setToolTip(tr("Back to the chart's own ranges after zooming or dragging (or double-click the chart)"));
    connect(resetButton, &QToolButton::clicked, this, &ChartPanel::resetRequested);
    m_bar->addWidget(resetButton);
    auto *copyButton = new QToolButton(this);
    copyButton->setText(tr("Copy"));
    copyButton->setToolTip(tr("Copy this chart to the clipboard as an image"));
    connect(copyButton, &QToolButton::clicked, this, &ChartPanel::copyToClipboard);
    m_bar->addWidget(copyButton);
    auto *exportButton = new QToolButton(this);
    exportButton->setText(tr("Export…"));
    exportButton->setToolTip(tr("Save this chart as PNG, PDF or SVG"));
    connect(exportButton, &QToolButton::clicked, this, &ChartPanel::exportDialog);
    m_bar->addWidget(exportButton);
    layout->addLayout(m_bar);
    chart->setParent(this);
    chart->installEventFilter(this);
    layout->addWidget(chart, 1);
}

bool ChartPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_chart && event->type() == QEvent::MouseButtonDblClick)
        emit resetRequested();
    return QWidget::eventFilter(watched, event);
}

void ChartPanel::copyToClipboard()
{
    const QPixmap image = m_chart->toPixmap(m_chart->width(), m_chart->height(), 2.0);
    QGuiApplication::clipboard()->setPixmap(image);
}

void ChartPanel::addControl(QWidget *control)
{
    m_bar->insertWidget(0, control);
}

void ChartPanel::exportDialog()
{
    QString filter;
    QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), m_name + QStringLiteral(".png"),
                                                tr("PNG image (*.png);;PDF document (*.pdf);;SVG drawing (*.svg)"),
                                                &filter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += filter.contains(QStringLiteral("pdf")) ? QStringLiteral(".pdf")
                : filter.contains(QStringLiteral("svg")) ? QStringLiteral(".svg")
                                                         : QStringLiteral(".png");
    // The chart as laid out on screen (never squashed below 800x500), at twice the pixels: sharp
    // on a slide or a printed page, with the proportions the user looked at.
    const int w = std::max(800, m_chart->width());
    const int h = std::max(500, m_chart->height());
    if (auto error = exportChart(m_chart, path, w, h, 2.0, m_title))
        QMessageBox::warning(this, tr("Cannot export"), *error);
}

} // namespace meshplan::views
