<?php /* cron.php */ ?>
