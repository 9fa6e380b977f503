<?php /* wp-includes/version.php */ ?>
