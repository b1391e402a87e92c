/* A stand-in for bcryptprimitives.dll, which Wine gained only in 9.0: Rust's std (1.78 and
 * later) imports its ProcessPrng for HashMap seeds, and a test binary does not start without
 * it. Installed into the test WINEPREFIX by .ci/run; never shipped. Wine's RtlGenRandom
 * (advapi32's SystemFunction036) reads the host's random source.
 *
 * x86_64-w64-mingw32-gcc -shared -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
