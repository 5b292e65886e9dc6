package dev.fencing.benchmarks;

/**
 * An argument whose property is the key ({@code #order.account}): public, with a public getter, so that SpEL can
 * compile the key's read to bytecode once warm.
 */
public final class BenchOrder {

    private final String account;

    public BenchOrder(String account) {
        this.account = account;
    }

    public String getAccount() {
        return account;
    }
}
