// meshplan: the desktop planner.
#include "mainwindow.h"

#include <QApplication>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Meshplan"));
    QApplication::setApplicationName(QStringLiteral("Meshplan"));
    QApplication::setApplicationVersion(QStringLiteral(MESHPLAN_VERSION));
    meshplan::app::MainWindow window;
    window.show();
    return app.exec();
}
