package dev.fencing.it.weavinglambda;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Implements {@link LambdaLedger} with a lambda and with a method reference: no woven code runs for either (their
 * classes are made at run time), so their calls would run unfenced.
 */
public class LambdaLedgers {

    public static final List<String> ENTRIES = new CopyOnWriteArrayList<>();

    public static LambdaLedger lambda() {
        return entry -> {
            ENTRIES.add(entry);
            return entry;
        };
    }

    public static LambdaLedger reference() {
        return LambdaLedgers::write;
    }

    private static String write(String entry) {
        ENTRIES.add(entry);
        return entry;
    }
}
