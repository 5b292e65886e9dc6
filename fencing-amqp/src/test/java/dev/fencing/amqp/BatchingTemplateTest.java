package dev.fencing.amqp;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.rabbit.batch.SimpleBatchingStrategy;
import org.springframework.amqp.rabbit.core.BatchingRabbitTemplate;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A {@code BatchingRabbitTemplate} runs its before-publish post-processors once per batch, on the thread whose send
 * releases it: a review had the newer holder's message sent with the zombie's token that released the batch, and the
 * zombie's stale write accepted by the consumer. The post-processor refuses a batch: the releasing send fails and
 * nothing reaches the queue; a plain template beside it still sends.
 */
@Timeout(60)
class BatchingTemplateTest {

    @Test
    void aBatchIsRefusedAndNothingIsSent() throws Exception {
        try (TestBroker broker = new TestBroker()) {
            String queue = broker.queue("batched");
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.initialize();
            try {
                BatchingRabbitTemplate template = new BatchingRabbitTemplate(broker.connectionFactory,
                        new SimpleBatchingStrategy(2, 65_536, 30_000), scheduler);
                template.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
                FencingToken current = new FencingToken("accounts:1", 6, "holder-new");
                FencingToken zombie = new FencingToken("accounts:1", 5, "holder-old");
                // the newer holder's send joins the batch; the zombie's, on another thread, releases it
                CompletableFuture.runAsync(() -> {
                    try (FencingScope ignored = FencingContext.bind(current)) {
                        template.convertAndSend("", queue, "write:1:new");
                    }
                }).get(10, TimeUnit.SECONDS);
                try (FencingScope ignored = FencingContext.bind(zombie)) {
                    assertThatThrownBy(() -> template.convertAndSend("", queue, "write:1:zombie"))
                            .hasStackTraceContaining("the message is a batch a BatchingRabbitTemplate releases")
                            .rootCause().isInstanceOf(IllegalStateException.class);
                }
                Thread.sleep(300);
                assertThat(broker.depth(queue)).as("messages in the queue").isZero();

                RabbitTemplate plain = new RabbitTemplate(broker.connectionFactory);
                plain.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
                try (FencingScope ignored = FencingContext.bind(current)) {
                    plain.convertAndSend("", queue, "write:1:new");
                }
                org.springframework.amqp.core.Message received = plain.receive(queue, 5_000);
                assertThat(received).isNotNull();
                assertThat((String) received.getMessageProperties().getHeader(FencingTokenMessagePostProcessor.HEADER))
                        .isEqualTo(current.toText());
            } finally {
                scheduler.shutdown();
            }
        }
    }

    @Test
    void aBatchOfOneMessageReleasedByAnotherThreadsSendIsRefusedToo() throws Exception {
        // a BatchingRabbitTemplate sends a batch of one message as it is, without the batch header: the zombie's lone
        // buffered message, released by the newer holder's send, went with the newer holder's token (a re-trial)
        try (TestBroker broker = new TestBroker()) {
            String queue = broker.queue("single");
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.initialize();
            try {
                // a buffer of 20 bytes: the second message overflows it and releases the first, alone
                BatchingRabbitTemplate template = new BatchingRabbitTemplate(broker.connectionFactory,
                        new SimpleBatchingStrategy(10, 20, 30_000), scheduler);
                template.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
                FencingToken zombie = new FencingToken("accounts:1", 5, "holder-old");
                FencingToken current = new FencingToken("accounts:1", 6, "holder-new");
                CompletableFuture.runAsync(() -> {
                    try (FencingScope ignored = FencingContext.bind(zombie)) {
                        template.convertAndSend("", queue, "write:1:zombie");
                    }
                }).get(10, TimeUnit.SECONDS);
                try (FencingScope ignored = FencingContext.bind(current)) {
                    assertThatThrownBy(() -> template.convertAndSend("", queue, "write:1:new"))
                            .hasStackTraceContaining("the message is a batch a BatchingRabbitTemplate releases");
                }
                Thread.sleep(300);
                assertThat(broker.depth(queue)).as("messages in the queue").isZero();
            } finally {
                scheduler.shutdown();
            }
        }
    }

    @Test
    void aBatchAThreadBuiltOfItsOwnMessagesGoesThroughAPlainTemplate() throws Exception {
        // one thread's own batch, sent through a plain template: its token is right for every message of it
        try (TestBroker broker = new TestBroker()) {
            String queue = broker.queue("manual");
            RabbitTemplate plain = new RabbitTemplate(broker.connectionFactory);
            plain.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
            FencingToken token = new FencingToken("accounts:1", 6, "holder");
            SimpleBatchingStrategy batching = new SimpleBatchingStrategy(2, 65_536, 30_000);
            assertThat(batching.addToBatch("", queue, new org.springframework.amqp.core.Message(
                    "write:1:a".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    new org.springframework.amqp.core.MessageProperties()))).isNull();
            org.springframework.amqp.rabbit.batch.MessageBatch batch = batching.addToBatch("", queue,
                    new org.springframework.amqp.core.Message("write:1:b".getBytes(
                            java.nio.charset.StandardCharsets.UTF_8),
                            new org.springframework.amqp.core.MessageProperties()));
            assertThat(batch).isNotNull();
            try (FencingScope ignored = FencingContext.bind(token)) {
                plain.send(batch.exchange(), batch.routingKey(), batch.message());
            }
            org.springframework.amqp.core.Message received = plain.receive(queue, 5_000);
            assertThat(received).isNotNull();
            assertThat((String) received.getMessageProperties().getHeader(FencingTokenMessagePostProcessor.HEADER))
                    .isEqualTo(token.toText());
        }
    }
}
