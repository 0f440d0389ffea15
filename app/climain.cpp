// meshplan-cli: the model's calculators on the command line.
#include "cli.h"

#include <iostream>

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    return meshplan::app::runCli(args, std::cout, std::cerr);
}
