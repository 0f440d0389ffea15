// A derivation's formula language (plan-format.md "Derivations"): Python's precedence and
// associativity, the six calls, the names a formula uses, and errors that say where they are.
#include "base/expression.h"

#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <clocale>
#include <cmath>
#include <csignal>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

using namespace meshplan::model;

namespace {

/// The value of `text` over `values`, or NaN with the error in `error`.
double valueOf(const std::string &text, const std::map<std::string, double> &values, std::string *error = nullptr)
{
    const auto parsed = Expression::parse(text);
    if (!parsed) {
        if (error)
            *error = parsed.error().message;
        return std::nan("");
    }
    const auto value = parsed->evaluate(values);
    if (!value) {
        if (error)
            *error = value.error().message;
        return std::nan("");
    }
    return *value;
}

} // namespace

class TestExpression : public QObject
{
    Q_OBJECT

private slots:
    // Every expected value is worked by hand, and is what Python prints for the same text.
    void evaluates_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("expected");
        QTest::newRow("product before sum") << "2+3*4" << 14.0;
        QTest::newRow("product before sum, left") << "2*3+4" << 10.0;
        QTest::newRow("subtraction is left-associative") << "10 - 4 - 3" << 3.0;
        QTest::newRow("division is left-associative") << "100 / 10 / 5" << 2.0;
        QTest::newRow("product and quotient left to right") << "8 / 4 * 2" << 4.0;
        QTest::newRow("power is right-associative") << "2**3**2" << 512.0;
        QTest::newRow("power before unary minus") << "-2**2" << -4.0;
        QTest::newRow("parenthesized negative base") << "(-2)**2" << 4.0;
        QTest::newRow("negative exponent") << "2**-1" << 0.5;
        QTest::newRow("negated power in an exponent") << "2**-3**2" << 1.0 / 512.0;
        QTest::newRow("minus before a product") << "-2*3" << -6.0;
        QTest::newRow("minus after a product") << "2*-3" << -6.0;
        QTest::newRow("double minus") << "2 - -3" << 5.0;
        QTest::newRow("minus minus") << "--4" << 4.0;
        QTest::newRow("parentheses") << "(2+3)*4" << 20.0;
        QTest::newRow("nested parentheses") << "((1 + 2) * (3 + 4)) / 7" << 3.0;
        QTest::newRow("power before product") << "3 * 2 ** 2" << 12.0;
        QTest::newRow("min of 2") << "min(3, 1)" << 1.0;
        QTest::newRow("max of 2") << "max(3, 1)" << 3.0;
        QTest::newRow("min of 3") << "min(3, 1, 2)" << 1.0;
        QTest::newRow("max of 3") << "max(1, 5, 2)" << 5.0;
        QTest::newRow("min of expressions") << "min(2 * 3, 10 - 5)" << 5.0;
        QTest::newRow("nested calls") << "min(max(1, 2), 3)" << 2.0;
        QTest::newRow("ceil") << "ceil(2.1)" << 3.0;
        QTest::newRow("ceil of a negative") << "ceil(-2.5)" << -2.0;
        QTest::newRow("floor") << "floor(2.9)" << 2.0;
        QTest::newRow("floor of a negative") << "floor(-2.5)" << -3.0;
        QTest::newRow("sqrt") << "sqrt(16)" << 4.0;
        QTest::newRow("log2") << "log2(1024)" << 10.0;
        QTest::newRow("a call in a power") << "sqrt(4) ** 3" << 8.0;
        QTest::newRow("exponent notation") << "1.5e3 + 2E-1" << 1500.2;
        QTest::newRow("leading point") << ".5 * 4" << 2.0;
        QTest::newRow("no spaces, many spaces") << "  1+2 *  3  " << 7.0;
        // Names: flops / (chips_rate * efficiency) with 9e14 FLOPs at 4.5e14 FLOP/s, half of it: 4 s.
        QTest::newRow("the contract's example") << "flops / (chips_rate * efficiency)" << 4.0;
        QTest::newRow("names in calls") << "ceil(flops / chips_rate) * efficiency" << 1.0;
        QTest::newRow("a name twice") << "efficiency * efficiency + efficiency" << 0.75;
    }

    void evaluates()
    {
        QFETCH(QString, text);
        QFETCH(double, expected);
        const std::map<std::string, double> values{{"flops", 9e14}, {"chips_rate", 4.5e14}, {"efficiency", 0.5}};
        std::string error;
        const double got = valueOf(text.toStdString(), values, &error);
        QVERIFY2(!std::isnan(got), error.c_str());
        QVERIFY2(std::fabs(got - expected) <= 1e-12 * std::fabs(expected),
                 qPrintable(QStringLiteral("%1 = %2, want %3").arg(text).arg(got, 0, 'g', 17).arg(expected, 0, 'g', 17)));
    }

    void namesInOrderOfFirstUse()
    {
        const auto a = Expression::parse("a * b + a / c");
        QVERIFY(a.hasValue());
        QCOMPARE(a->names(), (std::vector<std::string>{"a", "b", "c"}));
        const auto b = Expression::parse("min(x_1, y) ** z - x_1");
        QVERIFY(b.hasValue());
        QCOMPARE(b->names(), (std::vector<std::string>{"x_1", "y", "z"}));
        const auto c = Expression::parse("2 + 3 * max(1, 4)");
        QVERIFY(c.hasValue());
        QVERIFY(c->names().empty());
        // A function's name is not a value's name.
        const auto d = Expression::parse("sqrt(bytes) / log2(chips)");
        QVERIFY(d.hasValue());
        QCOMPARE(d->names(), (std::vector<std::string>{"bytes", "chips"}));
        QCOMPARE(d->text(), std::string("sqrt(bytes) / log2(chips)"));
    }

    void theTreeKeepsTheOrder()
    {
        // -2**2 is Negate(Power(2, 2)); 2**3**2 is Power(2, Power(3, 2)); parentheses are marked.
        using K = ExpressionNode::Kind;
        const auto neg = Expression::parse("-2**2");
        QVERIFY(neg.hasValue());
        QVERIFY(neg->root().kind == K::Negate);
        QVERIFY(neg->root().operands.at(0)->kind == K::Power);
        const auto pow = Expression::parse("2**3**2");
        QVERIFY(pow.hasValue());
        QVERIFY(pow->root().kind == K::Power);
        QVERIFY(pow->root().operands.at(0)->kind == K::Number);
        QVERIFY(pow->root().operands.at(1)->kind == K::Power);
        const auto par = Expression::parse("a * (b + c)");
        QVERIFY(par.hasValue());
        QVERIFY(par->root().kind == K::Multiply);
        QVERIFY(!par->root().operands.at(0)->parenthesized);
        QVERIFY(par->root().operands.at(1)->kind == K::Add);
        QVERIFY(par->root().operands.at(1)->parenthesized);
        const auto call = Expression::parse("max(a, b, 1)");
        QVERIFY(call.hasValue());
        QVERIFY(call->root().kind == K::Call);
        QCOMPARE(call->root().name, std::string("max"));
        QCOMPARE(call->root().operands.size(), std::size_t(3));
    }

    // Each malformed formula is refused with its reason and the 1-based character where it was
    // found (the character after the text when it ends early).
    void refuses_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<int>("position");
        QTest::newRow("unknown function") << "foo(1)" << "unknown function 'foo'" << 4;
        QTest::newRow("unknown function after a sum") << "1 + exp(2)" << "unknown function 'exp'" << 8;
        QTest::newRow("missing )") << "(a + b" << "missing ')'" << 7;
        QTest::newRow("missing ) of a call") << "min(a, b" << "missing ')' after the arguments of min" << 9;
        QTest::newRow("trailing )") << "a + b )" << "unexpected ')'" << 7;
        QTest::newRow("trailing name") << "a b" << "unexpected 'b'" << 3;
        QTest::newRow("trailing junk after a number") << "2.5.1" << "unexpected '.'" << 4;
        QTest::newRow("two operators") << "2 + * 3" << "unexpected '*'" << 5;
        QTest::newRow("unknown character") << "a $ b" << "unexpected '$'" << 3;
        QTest::newRow("empty") << "" << "the formula ends early" << 1;
        QTest::newRow("ends after an operator") << "a +" << "the formula ends early" << 4;
        QTest::newRow("ends after a power") << "a **" << "the formula ends early" << 5;
        QTest::newRow("unary plus is not in the grammar") << "+a" << "unexpected '+'" << 1;
        QTest::newRow("empty call") << "min()" << "unexpected ')'" << 5;
        QTest::newRow("sqrt of two") << "sqrt(1, 2)" << "sqrt takes one argument" << 11;
        QTest::newRow("lone point") << ". + 1" << "a malformed number" << 1;
    }

    void refuses()
    {
        QFETCH(QString, text);
        QFETCH(QString, reason);
        QFETCH(int, position);
        const auto parsed = Expression::parse(text.toStdString());
        QVERIFY2(!parsed.hasValue(), qPrintable(text));
        const QString message = QString::fromStdString(parsed.error().message);
        QCOMPARE(QString::fromStdString(parsed.error().path), QStringLiteral("expression"));
        QVERIFY2(message.startsWith(reason), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral(" at character %1 ").arg(position)), qPrintable(message));
    }

    // A name that has no value: evaluation fails with an error naming it and where it stands.
    void unknownNameAtEvaluation()
    {
        const auto parsed = Expression::parse("a * bb + c");
        QVERIFY(parsed.hasValue());
        const auto value = parsed->evaluate({{"a", 2}, {"c", 1}});
        QVERIFY(!value.hasValue());
        const QString message = QString::fromStdString(value.error().message);
        QVERIFY2(message.contains(QStringLiteral("'bb'")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("at character 5")), qPrintable(message));
        // With every name given it evaluates: 2 * 3 + 1.
        QCOMPARE(*parsed->evaluate({{"a", 2}, {"bb", 3}, {"c", 1}}), 7.0);
        // Extra values are allowed: a formula need not use them all.
        QCOMPARE(*parsed->evaluate({{"a", 2}, {"bb", 3}, {"c", 1}, {"unused", 9}}), 7.0);
    }

    // A Qt application sets the C locale from the environment (setlocale(LC_ALL, "")), so in a
    // German or French session the C library reads "0.5" as 0 followed by junk. Formulas are
    // the contract's text, not the user's language: they must read the same in every locale.
    void numbersReadTheSameInEveryLocale()
    {
        QTemporaryDir locales;
        const char *decimalComma = nullptr;
        for (const char *name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"})
            if (std::setlocale(LC_NUMERIC, name)) {
                decimalComma = name;
                break;
            }
        // Without one installed, build one where the system has glibc's locale sources.
        if (!decimalComma && locales.isValid() && QFileInfo::exists(QStringLiteral("/usr/share/i18n/locales/de_DE"))) {
            QProcess localedef;
            localedef.start(QStringLiteral("localedef"), {QStringLiteral("-i"), QStringLiteral("de_DE"),
                                                          QStringLiteral("-f"), QStringLiteral("UTF-8"),
                                                          locales.filePath(QStringLiteral("de_DE.UTF-8"))});
            if (localedef.waitForFinished(60000) && localedef.exitStatus() == QProcess::NormalExit) {
                qputenv("LOCPATH", locales.path().toLocal8Bit());
                if (std::setlocale(LC_NUMERIC, "de_DE.UTF-8"))
                    decimalComma = "de_DE.UTF-8";
            }
        }
        if (!decimalComma)
            QSKIP("no locale with a decimal comma here, and none can be built");
        QCOMPARE(std::localeconv()->decimal_point[0], ',');
        std::string error;
        const double value = valueOf("0.5 * x + 1.25e1", {{"x", 4}}, &error);
        std::setlocale(LC_NUMERIC, "C");
        qunsetenv("LOCPATH");
        QVERIFY2(value == 14.5, (std::string(decimalComma) + ": " + error).c_str());
    }

    // Moderate nesting and long sums parse and evaluate.
    void nestingAndLongSums()
    {
        const std::string open(200, '(');
        const std::string close(200, ')');
        const auto nested = Expression::parse(open + "1" + close);
        QVERIFY(nested.hasValue());
        QCOMPARE(*nested->evaluate({}), 1.0);
        // A chain of operators is as deep as it is long: 900 terms stay inside kMaxExpressionDepth
        // (the model's longest formulas have a few dozen), 2000 are refused with the reason.
        std::string sum = "1";
        for (int i = 0; i < 899; ++i)
            sum += " + 1";
        const auto longSum = Expression::parse(sum);
        QVERIFY(longSum.hasValue());
        QCOMPARE(*longSum->evaluate({}), 900.0);
        for (int i = 0; i < 1100; ++i)
            sum += " + 1";
        const auto tooLong = Expression::parse(sum);
        QVERIFY(!tooLong.hasValue());
        QVERIFY2(tooLong.error().message.find("nests deeper than 1000 levels") != std::string::npos,
                 tooLong.error().message.c_str());
    }

    // Text of any shape never crashes: 100,000 nested parentheses or unary minuses, and a sum of
    // 100,000 terms, are refused with an error or parsed, evaluated and freed. Each runs in a
    // child process, so a stack overflow fails this test rather than ending the whole run.
    void hugeFormulasDoNotCrash_data()
    {
        QTest::addColumn<QString>("shape");
        QTest::newRow("nested parentheses") << "parentheses";
        QTest::newRow("nested minus") << "minus";
        QTest::newRow("long sum") << "sum";
    }

    void hugeFormulasDoNotCrash()
    {
        QFETCH(QString, shape);
        constexpr int n = 100000;
        std::string text;
        if (shape == QStringLiteral("parentheses"))
            text = std::string(n, '(') + "1" + std::string(n, ')');
        else if (shape == QStringLiteral("minus"))
            text = std::string(n, '-') + "1";
        else
            for (int i = 0; i <= n; ++i)
                text += i ? "+1" : "1";
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            // The crash is this test's finding: no Qt Test crash report (a debugger) in the child.
            for (const int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE})
                std::signal(sig, SIG_DFL);
            {
                const auto parsed = Expression::parse(text);
                if (parsed) {
                    const auto value = parsed->evaluate({});
                    if (!value)
                        _exit(3);
                }
            }
            _exit(0);
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        // Past kMaxExpressionDepth levels the parser refuses the text (the child exits 0 either way).
        QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                 qPrintable(WIFSIGNALED(status) ? QStringLiteral("killed by signal %1").arg(WTERMSIG(status))
                                                : QStringLiteral("exit %1").arg(WEXITSTATUS(status))));
    }
};

QTEST_APPLESS_MAIN(TestExpression)
#include "tst_expression.moc"
