/* redirect.h - Criterion's output redirection, which the ThreadSanitizer stand-in (criterion.h here) does not
 * offer: including it is allowed, using it is not. */
#include <criterion/criterion.h>
