<?php /* wp-config.php */ ?>
