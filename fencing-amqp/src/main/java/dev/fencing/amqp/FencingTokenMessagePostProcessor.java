package dev.fencing.amqp;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingSnapshot;
import dev.fencing.context.MissingTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenFormatException;
import dev.fencing.token.TokenList;
import org.springframework.amqp.core.Correlation;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Producer side: writes the tokens bound on the sending thread ({@link FencingContext}) into the message's
 * {@value #HEADER} header, in the text form of {@link TokenList} (the HTTP header's), in place of a value set by hand;
 * more tokens than that form's limits allow fail the send ({@link TokenFormatException}) instead of making a message
 * every consumer would reject. Signed tokens are sent in their signed text form, as bound. Register it with
 * {@code RabbitTemplate.setBeforePublishPostProcessors(...)}; a send of a {@code BatchingRabbitTemplate}, whose
 * post-processors run once per batch on whichever thread releases it, is refused (the send fails, nothing is sent).
 *
 * <p>{@link #FencingTokenMessagePostProcessor()} sends every bound token and sends a message without the header when
 * none is bound (its consumer's fenced writes are then refused as missing). {@link #forResources(Collection)} sends
 * only the tokens of the resources named and refuses to send, with a {@link MissingTokenException}, a message for
 * which one of them has no token bound: fail closed where the application said a token must travel.
 *
 * <p>The tokens written count as sent ({@link FencingSnapshot#markSent}) for their lock's unchecked-lease report when
 * the header is written, before the publish: Spring AMQP calls a before-publish post-processor with no hook after the
 * publish (publisher confirms and observations are the template's options, not this post-processor's), so a send that
 * fails after it (a later post-processor, a closed channel, a rolled-back transacted channel, a nack) still counts.
 */
public final class FencingTokenMessagePostProcessor implements MessagePostProcessor {

    /** The message header the tokens travel in: {@value}, the HTTP header's name. */
    public static final String HEADER = TokenList.HEADER;

    private static final String BATCHING_TEMPLATE = "org.springframework.amqp.rabbit.core.BatchingRabbitTemplate";
    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

    /** The resources to send, each a base resource or an effective one; {@code null}: every bound token. */
    private final Set<String> resources;

    /** Sends every token bound on the sending thread; a message sent with none bound goes without the header. */
    public FencingTokenMessagePostProcessor() {
        this.resources = null;
    }

    private FencingTokenMessagePostProcessor(Set<String> resources) {
        this.resources = resources;
    }

    /**
     * Sends only the tokens for {@code resources}, each a base resource ({@code accounts}, which covers
     * {@code accounts:42}) or an effective one ({@code accounts:42}); sending fails with a
     * {@link MissingTokenException} (wrapped by {@code RabbitTemplate} in an {@code AmqpException}) when one of them
     * has no token bound, and nothing is sent.
     *
     * @throws IllegalArgumentException when {@code resources} is empty or names a blank resource
     */
    public static FencingTokenMessagePostProcessor forResources(Collection<String> resources) {
        if (resources == null || resources.isEmpty()) {
            throw new IllegalArgumentException("FencingTokenMessagePostProcessor.forResources needs at least one "
                    + "resource name; use new FencingTokenMessagePostProcessor() to send every bound token");
        }
        Set<String> names = new LinkedHashSet<>();
        for (String resource : resources) {
            if (resource == null || resource.isBlank() || !resource.strip().equals(resource)) {
                throw new IllegalArgumentException("FencingTokenMessagePostProcessor.forResources: resource name '"
                        + resource + "' is blank or has surrounding spaces");
            }
            names.add(resource);
        }
        return new FencingTokenMessagePostProcessor(Set.copyOf(names));
    }

    @Override
    public Message postProcessMessage(Message message) {
        return write(message, "send");
    }

    @Override
    public Message postProcessMessage(Message message, Correlation correlation, String exchange,
                                      String routingKey) {
        return write(message, "send to exchange '" + exchange + "' with routing key '" + routingKey + "'");
    }

    private Message write(Message message, String operation) {
        if (releasedByABatchingTemplate()) {
            // a BatchingRabbitTemplate runs its post-processors once per batch, on the thread that releases it (or
            // its scheduler): that thread's tokens would travel for every message of the batch, other senders' too,
            // also for a batch of one message, which it sends as it is
            throw new IllegalStateException("Cannot " + operation + ": the message is a batch a BatchingRabbitTemplate "
                    + "releases, and this post-processor runs once for the whole batch on the thread that releases it, "
                    + "so the batch would carry that thread's tokens for messages other threads sent with their own (a "
                    + "newer holder's token for a zombie's message, say). Send fenced messages through a "
                    + "RabbitTemplate that does not batch; nothing was sent");
        }
        FencingSnapshot snapshot = FencingContext.snapshot();
        List<FencingToken> tokens = selected(snapshot.values(), operation);
        if (tokens.isEmpty()) {
            return message;
        }
        String text = TokenList.format(tokens);
        if (tokens.size() > TokenList.MAX_ENTRIES || text.length() > TokenList.MAX_LENGTH) {
            throw new TokenFormatException("Cannot " + operation + ": the " + tokens.size() + " tokens bound make a "
                    + HEADER + " header of " + text.length() + " characters, more than the " + TokenList.MAX_ENTRIES
                    + " entries or " + TokenList.MAX_LENGTH + " characters a consumer accepts");
        }
        message.getMessageProperties().setHeader(HEADER, text);
        snapshot.markSent(tokens);
        return message;
    }

    /** Whether a {@code BatchingRabbitTemplate} (or a subclass) is sending: it sends batches, of one message too. */
    private static boolean releasedByABatchingTemplate() {
        return WALKER.walk(frames -> frames.anyMatch(frame -> isBatching(frame.getDeclaringClass())));
    }

    private static boolean isBatching(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(BATCHING_TEMPLATE)) {
                return true;
            }
        }
        return false;
    }

    private List<FencingToken> selected(Collection<FencingToken> bound, String operation) {
        if (resources == null) {
            return List.copyOf(bound);
        }
        List<FencingToken> tokens = new ArrayList<>();
        for (String resource : resources) {
            boolean found = false;
            for (FencingToken token : bound) {
                if (covers(resource, token.resource())) {
                    found = true;
                    if (!tokens.contains(token)) {
                        tokens.add(token);
                    }
                }
            }
            if (!found) {
                throw new MissingTokenException(resource, operation + " (FencingTokenMessagePostProcessor)");
            }
        }
        return tokens;
    }

    /** Whether the configured {@code name} covers the token's effective {@code resource}. */
    static boolean covers(String name, String resource) {
        return resource.equals(name) || resource.startsWith(name + ":");
    }
}
