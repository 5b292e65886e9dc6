package dev.fencing.benchmarks;

/**
 * The same argument as {@link BenchOrder}, but a package-private type: SpEL cannot compile an expression over it,
 * so a key SpEL evaluates stays interpreted. Measured to show what that costs.
 */
final class HiddenOrder {

    private final String account;

    HiddenOrder(String account) {
        this.account = account;
    }

    public String getAccount() {
        return account;
    }
}
