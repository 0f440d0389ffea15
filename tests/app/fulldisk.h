#pragma once
// A full disk for tests, without root: RLIMIT_FSIZE makes every write past `bytes` fail (EFBIG)
// as ENOSPC would, for this process and the programs it starts. SIGXFSZ is ignored meanwhile, so
// the failed write returns an error instead of killing the writer.

#include <csignal>
#include <sys/resource.h>

namespace meshplan::testing {

class FullDisk
{
public:
    explicit FullDisk(rlim_t bytes)
    {
        getrlimit(RLIMIT_FSIZE, &m_saved);
        m_savedHandler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit limit = m_saved;
        limit.rlim_cur = bytes;
        m_active = setrlimit(RLIMIT_FSIZE, &limit) == 0;
    }
    ~FullDisk()
    {
        setrlimit(RLIMIT_FSIZE, &m_saved);
        std::signal(SIGXFSZ, m_savedHandler);
    }
    FullDisk(const FullDisk &) = delete;
    FullDisk &operator=(const FullDisk &) = delete;

    bool isActive() const { return m_active; }

private:
    rlimit m_saved{};
    void (*m_savedHandler)(int) = nullptr;
    bool m_active = false;
};

} // namespace meshplan::testing
