/**
 * The conformance kit every lock backend's tests run: abstract JUnit 5 tests in an ordinary jar, which a
 * backend depends on in test scope. A backend's test extends {@link LockContractTest} (the core
 * contract, every backend), {@link LockFaultContractTest} (adds what needs a server and fault controls),
 * {@link LockProcessFaultContractTest} (adds holders in other processes killed and frozen: a server
 * backend's main class) or {@link LockFailoverContractTest} (the primary killed in the middle of a contended run), and says
 * only how to reach the backend; a backend without the capability does not extend the class, rather
 * than skip its tests. {@link LockHistory} checks a whole run afterwards (no overlapping holders, tokens
 * in order, no renewal after release or loss), {@link FencedRegister} is a resource guarded by fencing
 * tokens, {@link BackendArchitecture} holds the dependency rules each backend checks, and
 * {@link SecretsCheck} the clause that no secret is ever printed.
 */
package dev.warden.lock.tck;
