#include "chartpanel.h"

#include "chartstyle.h"

#include <qcustomplot.h>

#include <QFileDialog>
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
    auto *exportButton = new QToolButton(this);
    exportButton->setText(tr("Export…"));
    exportButton->setToolTip(tr("Save this chart as PNG, PDF or SVG"));
    connect(exportButton, &QToolButton::clicked, this, &ChartPanel::exportDialog);
    m_bar->addWidget(exportButton);
    layout->addLayout(m_bar);
    chart->setParent(this);
    layout->addWidget(chart, 1);
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
    const int w = std::max(800, m_chart->width());
    const int h = std::max(500, m_chart->height());
    if (auto error = exportChart(m_chart, path, w, h))
        QMessageBox::warning(this, tr("Cannot export"), *error);
}

} // namespace meshplan::views
