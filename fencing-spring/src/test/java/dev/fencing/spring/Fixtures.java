package dev.fencing.spring;

import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.token.FencingToken;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Beans under test: a ledger (resource side) and a service that opens the critical section (client side). */
final class Fixtures {

    private Fixtures() {
    }

    /** A repository whose interface carries the annotations, as Spring Data repositories do. */
    interface AccountRepository {
        @Fenced(resource = "accounts", key = "#accountId")
        void deposit(long accountId, long amount);

        @Fenced(resource = "accounts", key = "#order.customerId")
        void place(Order order);

        @Fenced(resource = "accounts", key = "#p0")
        void close(long accountId);

        /** A key SpEL must evaluate: a property and a method call, not one argument. */
        @Fenced(resource = "invoices", key = "#invoice.region.toLowerCase() + '-' + #invoice.number")
        void file(Invoice invoice);

        /** A key whose type only the call can tell. */
        @Fenced(resource = "accounts", key = "#customer")
        void touch(Object customer);

        long balance(long accountId);
    }

    static class MapAccountRepository implements AccountRepository {
        final Map<Long, Long> balances = new ConcurrentHashMap<>();
        final List<String> log = new CopyOnWriteArrayList<>();

        @Override
        public void deposit(long accountId, long amount) {
            balances.merge(accountId, amount, Long::sum);
        }

        @Override
        public void place(Order order) {
            log.add("order for " + order.getCustomerId());
        }

        @Override
        public void close(long accountId) {
            balances.remove(accountId);
        }

        @Override
        public void file(Invoice invoice) {
            log.add("invoice " + invoice.getRegion() + " " + invoice.getNumber());
        }

        @Override
        public void touch(Object customer) {
            log.add("touched " + customer);
        }

        @Override
        public long balance(long accountId) {
            return balances.getOrDefault(accountId, 0L);
        }
    }

    static final class Order {
        private final long customerId;

        Order(long customerId) {
            this.customerId = customerId;
        }

        public long getCustomerId() {
            return customerId;
        }
    }

    /** A public argument type, so that SpEL can compile the key's property reads and method calls. */
    public static final class Invoice {
        private final String region;
        private final String number;

        public Invoice(String region, String number) {
            this.region = region;
            this.number = number;
        }

        public String getRegion() {
            return region;
        }

        public String getNumber() {
            return number;
        }
    }

    /** A record argument: its accessor serves the key too. */
    record Shipment(String warehouse, int parcel) {
    }

    /** Class-level @Fenced: every public method is fenced, toString is not. */
    @Fenced(resource = "ledger")
    static class Ledger {
        final List<String> entries = new CopyOnWriteArrayList<>();
        final List<FencingToken> seen = new CopyOnWriteArrayList<>();

        public void append(String entry) {
            seen.add(FencingContext.current("ledger"));
            entries.add(entry);
        }

        @Fenced(resource = "shipments", key = "#shipment.warehouse")
        public void ship(Shipment shipment) {
            entries.add("shipped " + shipment.parcel());
        }

        @Override
        public String toString() {
            return "Ledger" + entries;
        }
    }

    /** Type-level @Fenced on an interface. */
    @Fenced(resource = "journal")
    interface Journal {
        void record(String line);
    }

    static class ListJournal implements Journal {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public void record(String line) {
            lines.add(line);
        }
    }

    /** The client side: opens the critical section, then writes through the ledger. */
    static class Bookkeeper {
        private final Ledger ledger;

        Bookkeeper(Ledger ledger) {
            this.ledger = ledger;
        }

        @Fenced(resource = "ledger", acquire = true)
        public FencingToken book(String entry) {
            ledger.append(entry);
            return FencingContext.current("ledger");
        }

        @Fenced(resource = "ledger", acquire = true)
        public void bookWith(Runnable body) {
            body.run();
        }

        public void bookWithoutFence(String entry) {
            ledger.append(entry);
        }
    }
}
