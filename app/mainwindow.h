#pragma once
// The application window. For now: the chip catalog; the planner canvas arrives with issue 5.

#include <QMainWindow>

namespace meshplan::views {
class ChipTable;
}

namespace meshplan::app {

class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget *parent = nullptr);

private:
    views::ChipTable *m_chips = nullptr;
};

} // namespace meshplan::app
