package dev.fencing.it.weavinglambda;

import dev.fencing.annotation.Fenced;

/** A functional interface whose one method is fenced on the interface. */
public interface LambdaLedger {

    @Fenced(resource = "woven-lambda")
    String append(String entry);
}
