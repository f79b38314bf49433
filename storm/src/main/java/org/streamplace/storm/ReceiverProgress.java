package org.streamplace.storm;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Waits, before a job whose monitor windows go through Storm's metrics path is stopped, until the
 * records receiver (streamplace/storm/receiver.py) holds the last measured window of every worker
 * of the topology that sent it any: {@code GET URL?prefix=STORM_ID&through=SECONDS} answers
 * {@code "READY TOTAL"}. {@link MeasuredWindow#METRICS_DELIVERY_MS} is when that window usually
 * arrives; on a loaded machine it came later, and the run lost it whole (a CI run on 2026-12-01:
 * 14 of 14 tasks' last window missing). At most {@link #WAIT_MS} more: after that the job stops
 * and the run reports the windows it misses, as before.
 */
final class ReceiverProgress {
    /** the longest wait after {@link MeasuredWindow#METRICS_DELIVERY_MS}: ten metrics ticks and more */
    static final long WAIT_MS = 15_000;
    static final long POLL_MS = 200;

    private ReceiverProgress() {
    }

    /** True once the receiver at {@code url} says every worker of {@code stormId} sent the window starting at {@code lastStartMs}; false at {@code deadlineMs}. */
    static boolean await(String url, String stormId, long lastStartMs, long deadlineMs) throws InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        URI uri = URI.create(url + "?prefix=" + URLEncoder.encode(stormId, StandardCharsets.UTF_8)
                + "&through=" + BigDecimal.valueOf(lastStartMs, 3).toPlainString());
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).GET().build();
        while (true) {
            try {
                HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && complete(r.body())) {
                    return true;
                }
            } catch (IOException e) {
                // the receiver busy or not answering this moment: asked again until the deadline
            }
            if (System.currentTimeMillis() >= deadlineMs) {
                return false;
            }
            Thread.sleep(POLL_MS);
        }
    }

    /** {@code "READY TOTAL"}: every worker that sent a window has sent the last one (and some did). */
    static boolean complete(String answer) {
        String[] parts = answer.trim().split(" ");
        if (parts.length != 2) {
            return false;
        }
        try {
            int ready = Integer.parseInt(parts[0]);
            int total = Integer.parseInt(parts[1]);
            return total > 0 && ready == total;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
