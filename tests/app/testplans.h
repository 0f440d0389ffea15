#pragma once
// A plan file of tests/data read for a test, against the built-in catalogs; a file that does not
// read or parse stops the test run with its error rather than letting later checks fail obscurely.

#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <QFile>
#include <QString>
#include <QtGlobal>

namespace meshplan::testing {

inline model::Plan loadPlan(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    auto plan = model::planFromText(f.readAll().toStdString(), path.toStdString(), model::ChipCatalog::builtin(),
                                    model::ModelCatalog::builtin());
    if (!plan)
        qFatal("%s", plan.error().toString().c_str());
    return *plan;
}

} // namespace meshplan::testing
